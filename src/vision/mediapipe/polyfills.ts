// Browser globals @mediapipe/tasks-vision 1.1.0 needs in plain Node 20. Installed lazily, the first
// time a model is loaded (not when the passport module is imported), so a process that only reads
// the specs never gets a `self` global. They are process-wide: keep the models in worker processes.
import { pathToFileURL } from 'node:url';
import { FakeWebGL2 } from './fake-webgl.js';
import { silenceWasmDebugLog, wasmModuleOverrides } from './wasm-log.js';

type Globals = Record<string, unknown>;
let installed = false;

/** Minimal ImageData (Node has none): tasks-vision uploads it with texImage2D. */
export class NodeImageData {
  readonly data: Uint8ClampedArray;
  readonly width: number;
  readonly height: number;
  readonly colorSpace = 'srgb';
  constructor(dataOrWidth: Uint8ClampedArray | number, width: number, height?: number) {
    if (typeof dataOrWidth === 'number') {
      this.width = dataOrWidth;
      this.height = width;
      this.data = new Uint8ClampedArray(this.width * this.height * 4);
    } else {
      this.data = dataOrWidth;
      this.width = width;
      this.height = height ?? dataOrWidth.length / 4 / width;
    }
    if (this.data.length !== this.width * this.height * 4) throw new RangeError('ImageData: data length does not match width*height*4');
  }
}

export function installPolyfills(): void {
  if (installed) return;
  installed = true;
  const g = globalThis as unknown as Globals;
  g.self ??= globalThis;
  // The WASM loader first tries importScripts (classic worker). Throwing a TypeError makes the
  // library fall back to `self.import(url)`.
  g.importScripts ??= () => {
    throw new TypeError('importScripts is not available in Node');
  };
  // `self.import`: the library calls it with the wasmLoaderPath for every task it creates, then
  // reads and clears self.ModuleFactory. Node caches ES modules, so a plain import() would not re-run
  // the loader for the second task ("ModuleFactory not set."): re-arm ModuleFactory from the cached
  // module's default export every time. self.Module (print/printErr) silences the WASM's log lines;
  // the library copies locateFile into it.
  g.import = async (url: string): Promise<void> => {
    const href = url.startsWith('file:') ? url : pathToFileURL(url).href;
    const mod = (await import(href)) as { default: unknown };
    g.ModuleFactory = mod.default;
    g.Module = wasmModuleOverrides();
    silenceWasmDebugLog();
  };
  if (typeof g.ImageData === 'undefined') g.ImageData = NodeImageData;
  // Emscripten checks `(version == "webgl") == (ctx instanceof WebGLRenderingContext)`: the WebGL1
  // class must exist and the fake WebGL2 context must not be an instance of it.
  g.WebGLRenderingContext ??= class WebGLRenderingContext {};
  g.WebGL2RenderingContext ??= FakeWebGL2;
}

/** RGBA pixels as the ImageData the tasks accept (no copy). */
export function toImageData(rgba: Uint8Array, width: number, height: number): ImageData {
  installPolyfills();
  const Ctor = (globalThis as unknown as { ImageData: new (d: Uint8ClampedArray, w: number, h: number) => ImageData }).ImageData;
  return new Ctor(new Uint8ClampedArray(rgba.buffer, rgba.byteOffset, rgba.byteLength), width, height);
}
