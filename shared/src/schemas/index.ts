/** `@studio/shared/schemas`: the TypeBox schemas of every resource, each both validator and static type. */
export * from './classes';
export * from './content';
export * from './coupons';
export * from './events';
export * from './examples';
export * from './fields';
export * from './instructors';
export * from './keys';
export * from './locations';
export * from './members';
export * from './page';
export * from './plans';
export * from './problem';
export * from './programs';
export * from './sandboxes';
export * from './schedule';
export * from './storefront';
