/** The package's version, as package.json says (sdk/test/package.test.ts holds them equal); it names the SDK in User-Agent. */
export const VERSION = '0.1.0';
