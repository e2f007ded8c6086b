export * from './base62';
export * from './feistel-scrambler';
export * from './segment-id-allocator';
export * from './code-generator';
