/** `Array.isArray` without its narrowing of a typed value to `any[]` (which would switch off type checks after it). */
export const isArray: (value: unknown) => boolean = Array.isArray;
