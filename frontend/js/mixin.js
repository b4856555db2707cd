// One object written as several files by idea (the App controller, the Plot): each file is
// a class whose methods are copied onto the object's prototype.
//
// The contract: the copied methods run with the object's own `this`, so they share its
// fields, and only the fields its constructor declares (the App's runtime in store.js, the
// Plot's in its constructor); tests/store.test.js reads the sources and refuses a field
// written anywhere else. A method name is defined once: mixin() refuses a second definition
// (a later file silently replacing an earlier one's method).

/** Copies the methods (and getters) of each source class onto `target`'s prototype. */
export function mixin(target, ...sources) {
  const from = new Map(Object.getOwnPropertyNames(target.prototype).map((name) => [name, target.name]));
  for (const source of sources) {
    for (const name of Object.getOwnPropertyNames(source.prototype)) {
      if (name === 'constructor') continue;
      if (from.has(name)) throw new Error(`${source.name}.${name} would replace ${from.get(name)}.${name} on ${target.name}`);
      from.set(name, source.name);
      Object.defineProperty(target.prototype, name, Object.getOwnPropertyDescriptor(source.prototype, name));
    }
  }
}
