export * from './constants';
export * from './errors';
export * from './jsonrpc';
export * from './core';
export * from './tasks';
export * from './headers';
export * from './legacy';
export * from './prompts';
