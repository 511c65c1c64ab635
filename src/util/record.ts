/**
 * Records keyed by names a user chose (columns, attributes) or by data values. On a plain `{}`
 * a key such as `constructor` or `toString` reads Object.prototype's member when absent, and
 * assigning `__proto__` replaces the prototype instead of adding a key. In code, key such
 * things with a Map; these are for objects written to JSON as they are, and for reading one.
 */

/** An empty record without a prototype: every key, `__proto__` included, is an ordinary one. */
export function emptyRecord<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/** A record's own entries in a record without a prototype (e.g. an object JSON.parse made): a missing key reads undefined. */
export function ownRecord<T>(record: Readonly<Record<string, T>>): Record<string, T> {
  return Object.assign(emptyRecord<T>(), record);
}
