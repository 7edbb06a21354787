// The MediaPipe WASM prints glog lines ("I1122 ... gl_context.cc ...", "Graph successfully started
// running.") through emscripten's print/printErr. They are dropped unless PASSPORT_MP_LOG=1, or
// routed to a sink set with setWasmLogSink (e.g. a pino logger at debug level).

export type WasmLogSink = (line: string, stream: 'stdout' | 'stderr') => void;

let sink: WasmLogSink | null = process.env.PASSPORT_MP_LOG === '1' ? (line) => process.stderr.write(`[mediapipe] ${line}\n`) : null;
let dropped = 0;

export function setWasmLogSink(next: WasmLogSink | null): void {
  sink = next;
}

/** How many WASM log lines were swallowed (for tests and diagnostics). */
export function droppedWasmLogLines(): number {
  return dropped;
}

const emit = (stream: 'stdout' | 'stderr') => (...parts: unknown[]): void => {
  const line = parts.map(String).join(' ');
  if (sink) sink(line, stream);
  else dropped++;
};

/** Emscripten Module overrides passed to the WASM factory. */
export function wasmModuleOverrides(): Record<string, unknown> {
  return { print: emit('stdout'), printErr: emit('stderr') };
}

/**
 * The loader module sets `globalThis.custom_dbg = console.warn` when it is first evaluated; the
 * WASM's glog lines (W1122 ... gl_context.cc ...) go through it. Replace it after each import.
 */
export function silenceWasmDebugLog(): void {
  (globalThis as Record<string, unknown>).custom_dbg = emit('stderr');
}
