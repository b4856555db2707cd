// One object written as several files by idea (the App controller, the Plot): each file is
// a class whose methods are copied onto the object's prototype.

/** Copies the methods (and getters) of each source class onto `target`'s prototype. */
export function mixin(target, ...sources) {
  for (const source of sources) {
    for (const name of Object.getOwnPropertyNames(source.prototype)) {
      if (name === 'constructor') continue;
      Object.defineProperty(target.prototype, name, Object.getOwnPropertyDescriptor(source.prototype, name));
    }
  }
}
