// A kernel's header: i32 words at `state`, laid out by its TS wrapper (src/wasm/layout.ts).

// @ts-expect-error: decorator
@inline
export function word(state: usize, i: i32): i32 {
  return load<i32>(state + (<usize>i << 2));
}
