export * from './operations';
export * from './problem';
export * from './ids';
export * from './time';
export * from './apikey';
export * from './signing';
export * from './config';
export * from './http';
