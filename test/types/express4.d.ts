// express@4 is installed under the alias `express4` for tests; its API is typed like Express's.
declare module 'express4' {
  import express from 'express';
  export default express;
}
