// Promise.withResolvers arrived in Node 22; aws-local-stepfunctions 3.0.0
// calls it, and the project runs on Node 20. sfn-local.cjs requires this
// before the library. Remove it once Node 22 is the floor.
if (!Promise.withResolvers) {
  Promise.withResolvers = function withResolvers() {
    let resolve, reject;
    const promise = new Promise((res, rej) => { resolve = res; reject = rej; });
    return { promise, resolve, reject };
  };
}
