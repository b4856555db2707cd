// The controller is one object (the `app` panels and features talk to) written as several
// files by idea: each file is a class whose methods are copied onto App's prototype.

/** Copies the methods (and getters) of each source class onto `target`'s prototype. */
export function mixin(target, ...sources) {
  for (const source of sources) {
    for (const name of Object.getOwnPropertyNames(source.prototype)) {
      if (name === 'constructor') continue;
      Object.defineProperty(target.prototype, name, Object.getOwnPropertyDescriptor(source.prototype, name));
    }
  }
}
