// A minimal *fake* WebGL2 context for @mediapipe/tasks-vision 1.1.0 running with the CPU delegate.
//
// Even on CPU the task graph takes its input image as a GL texture: per detect()/segment() call the
// library makes exactly one texImage2D (upload) and the graph's ImageCloneCalculator makes one
// readPixels (read back to CPU memory). Nothing is ever drawn. This object stores uploaded pixels in
// JS memory and answers readPixels from them. Draw calls are counted (stats.draws) so a test can
// prove that nothing relies on real rendering; anything that renders with GL (GPU delegate,
// getAsWebGLTexture, DrawingUtils) would silently produce garbage here. Re-check after upgrading
// tasks-vision (the package is pinned to 1.1.0 for this reason).

const GL = {
  TEXTURE0: 0x84c0,
  RGBA: 0x1908, RGB: 0x1907, ALPHA: 0x1906, LUMINANCE: 0x1909, RED: 0x1903, RG: 0x8227,
  R32F: 0x822e, RGBA32F: 0x8814, RGBA16F: 0x881a, R16F: 0x822d, RG32F: 0x8230,
  UNSIGNED_BYTE: 0x1401, FLOAT: 0x1406, HALF_FLOAT: 0x140b,
  FRAMEBUFFER: 0x8d40, READ_FRAMEBUFFER: 0x8ca8, DRAW_FRAMEBUFFER: 0x8ca9, RENDERBUFFER: 0x8d41,
  COLOR_ATTACHMENT0: 0x8ce0, FRAMEBUFFER_COMPLETE: 0x8cd5,
  UNPACK_FLIP_Y_WEBGL: 0x9240, UNPACK_PREMULTIPLY_ALPHA_WEBGL: 0x9241, UNPACK_ALIGNMENT: 0x0cf5, PACK_ALIGNMENT: 0x0d05,
  VERSION: 0x1f02, VENDOR: 0x1f00, RENDERER: 0x1f01, SHADING_LANGUAGE_VERSION: 0x8b8c,
  MAX_TEXTURE_SIZE: 0x0d33, MAX_VIEWPORT_DIMS: 0x0d3a, MAX_RENDERBUFFER_SIZE: 0x84e8,
  MAX_TEXTURE_IMAGE_UNITS: 0x8872, MAX_COMBINED_TEXTURE_IMAGE_UNITS: 0x8b4d, MAX_VERTEX_ATTRIBS: 0x8869,
  MAX_VERTEX_TEXTURE_IMAGE_UNITS: 0x8b4c, MAX_DRAW_BUFFERS: 0x8824, MAX_COLOR_ATTACHMENTS: 0x8cdf,
  MAJOR_VERSION: 0x821b, MINOR_VERSION: 0x821c, NO_ERROR: 0,
  COMPILE_STATUS: 0x8b81, LINK_STATUS: 0x8b82, VALIDATE_STATUS: 0x8b83, DELETE_STATUS: 0x8b80,
  TEXTURE_2D: 0x0de1, TEXTURE_BINDING_2D: 0x8069, FRAMEBUFFER_BINDING: 0x8ca6, ACTIVE_TEXTURE: 0x84e0,
  CURRENT_PROGRAM: 0x8b8d, SYNC_GPU_COMMANDS_COMPLETE: 0x9117, ALREADY_SIGNALED: 0x911a,
  CONDITION_SATISFIED: 0x911c, SYNC_STATUS: 0x9114, SIGNALED: 0x9119,
  TEXTURE_MIN_FILTER: 0x2801, TEXTURE_MAG_FILTER: 0x2800, TEXTURE_WRAP_S: 0x2802, TEXTURE_WRAP_T: 0x2803,
  LINEAR: 0x2601, NEAREST: 0x2600, CLAMP_TO_EDGE: 0x812f,
  DEPTH_BUFFER_BIT: 0x100, COLOR_BUFFER_BIT: 0x4000,
} as const;

interface FakeTexture {
  readonly __tex: number;
  width: number;
  height: number;
  format: number;
  type: number;
  data: Uint8Array | null;
}
interface FakeFramebuffer {
  readonly __fb: number;
  color: FakeTexture | null;
}
interface PixelSource {
  width: number;
  height: number;
  data?: ArrayBufferView;
}

export interface FakeGlStats {
  uploads: number;
  readPixels: number;
  draws: number;
}

let nextId = 1;

function bytesPerPixel(format: number, type: number): number {
  const channels =
    format === GL.RGB ? 3 : format === GL.RG ? 2 : format === GL.RED || format === GL.ALPHA || format === GL.LUMINANCE ? 1 : 4;
  const size = type === GL.FLOAT ? 4 : type === GL.HALF_FLOAT ? 2 : 1;
  return channels * size;
}

function flipRows(d: Uint8Array, w: number, h: number, bpp: number): Uint8Array {
  const out = new Uint8Array(d.length);
  const row = w * bpp;
  for (let r = 0; r < h; r++) out.set(d.subarray(r * row, (r + 1) * row), (h - 1 - r) * row);
  return out;
}

function asBytes(view: ArrayBufferView): Uint8Array {
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

/** The fake context. Methods not listed here read as `undefined` through the Proxy in createFakeCanvas. */
export class FakeWebGL2 {
  readonly stats: FakeGlStats = { uploads: 0, readPixels: 0, draws: 0 };
  private activeUnit = 0;
  private readonly units = new Map<number, FakeTexture | null>();
  private drawFb: FakeFramebuffer | null = null;
  private readFb: FakeFramebuffer | null = null;
  private readonly pixelStore = new Map<number, number | boolean>();

  constructor(readonly canvas: FakeCanvas) {}

  get drawingBufferWidth(): number { return this.canvas.width; }
  get drawingBufferHeight(): number { return this.canvas.height; }
  getContextAttributes(): Record<string, unknown> {
    return { alpha: true, depth: false, stencil: false, antialias: false, premultipliedAlpha: false, preserveDrawingBuffer: false };
  }
  isContextLost(): boolean { return false; }
  getSupportedExtensions(): string[] { return ['EXT_color_buffer_float', 'OES_texture_float_linear']; }
  getExtension(name: string): object | null {
    return name === 'EXT_color_buffer_float' || name === 'OES_texture_float_linear' ? {} : null;
  }
  getError(): number { return GL.NO_ERROR; }
  getParameter(p: number): unknown {
    switch (p) {
      case GL.VERSION: return 'WebGL 2.0 (fake, CPU readback only)';
      case GL.SHADING_LANGUAGE_VERSION: return 'WebGL GLSL ES 3.00';
      case GL.VENDOR: case GL.RENDERER: return 'pictor-fake-webgl';
      case GL.MAX_TEXTURE_SIZE: case GL.MAX_RENDERBUFFER_SIZE: return 16384;
      case GL.MAX_VIEWPORT_DIMS: return new Int32Array([16384, 16384]);
      case GL.MAX_TEXTURE_IMAGE_UNITS: case GL.MAX_VERTEX_ATTRIBS: case GL.MAX_VERTEX_TEXTURE_IMAGE_UNITS: return 16;
      case GL.MAX_COMBINED_TEXTURE_IMAGE_UNITS: return 32;
      case GL.MAX_DRAW_BUFFERS: case GL.MAX_COLOR_ATTACHMENTS: return 8;
      case GL.MAJOR_VERSION: return 3;
      case GL.MINOR_VERSION: return 0;
      case GL.ACTIVE_TEXTURE: return GL.TEXTURE0 + this.activeUnit;
      case GL.TEXTURE_BINDING_2D: return this.units.get(this.activeUnit) ?? null;
      case GL.FRAMEBUFFER_BINDING: return this.drawFb;
      default: return 0;
    }
  }

  // --- textures ---
  createTexture(): FakeTexture {
    return { __tex: nextId++, width: 0, height: 0, format: GL.RGBA, type: GL.UNSIGNED_BYTE, data: null };
  }
  deleteTexture(t: FakeTexture | null): void { if (t) t.data = null; }
  isTexture(t: unknown): boolean { return typeof t === 'object' && t !== null && '__tex' in t; }
  activeTexture(unit: number): void { this.activeUnit = unit - GL.TEXTURE0; }
  bindTexture(_target: number, t: FakeTexture | null): void { this.units.set(this.activeUnit, t); }
  texParameteri(): void {}
  texParameterf(): void {}
  pixelStorei(p: number, v: number | boolean): void { this.pixelStore.set(p, v); }
  generateMipmap(): void {}
  texStorage2D(_target: number, _levels: number, internalformat: number, w: number, h: number): void {
    const t = this.units.get(this.activeUnit);
    if (!t) return;
    const isFloat = internalformat === GL.R32F || internalformat === GL.RGBA32F || internalformat === GL.RG32F;
    t.format = internalformat === GL.R32F || internalformat === GL.R16F ? GL.RED : GL.RGBA;
    t.type = isFloat ? GL.FLOAT : GL.UNSIGNED_BYTE;
    t.width = w;
    t.height = h;
    t.data = new Uint8Array(w * h * bytesPerPixel(t.format, t.type));
  }
  texImage2D(...a: unknown[]): void {
    const t = this.units.get(this.activeUnit);
    if (!t) return;
    if (a.length === 6) {
      // (target, level, internalformat, format, type, source): how tasks-vision uploads an ImageData
      const level = a[1] as number;
      if (level) return;
      const src = a[5] as PixelSource;
      if (!src?.data) throw new Error('fake WebGL: texImage2D source must be ImageData-like {data, width, height}');
      let data: Uint8Array = asBytes(src.data).slice();
      if (this.pixelStore.get(GL.UNPACK_FLIP_Y_WEBGL)) data = flipRows(data, src.width, src.height, 4);
      Object.assign(t, { width: src.width, height: src.height, format: a[3] as number, type: a[4] as number, data });
      this.stats.uploads++;
      return;
    }
    // (target, level, internalformat, width, height, border, format, type, pixels|null[, srcOffset])
    const [, level, , w, h, , format, type, pixels, srcOffset] = a as [number, number, number, number, number, number, number, number, ArrayBufferView | null, number | undefined];
    if (level) return;
    const data = new Uint8Array(w * h * bytesPerPixel(format, type));
    if (pixels && ArrayBuffer.isView(pixels)) {
      const elem = (pixels as unknown as { BYTES_PER_ELEMENT?: number }).BYTES_PER_ELEMENT ?? 1;
      const start = pixels.byteOffset + (srcOffset ?? 0) * elem;
      const src = new Uint8Array(pixels.buffer, start, Math.min(data.length, pixels.byteLength - (start - pixels.byteOffset)));
      data.set(src);
    }
    Object.assign(t, { width: w, height: h, format, type, data });
  }
  texSubImage2D(): void {}

  // --- framebuffers ---
  createFramebuffer(): FakeFramebuffer { return { __fb: nextId++, color: null }; }
  deleteFramebuffer(): void {}
  isFramebuffer(f: unknown): boolean { return typeof f === 'object' && f !== null && '__fb' in f; }
  bindFramebuffer(target: number, f: FakeFramebuffer | null): void {
    if (target === GL.FRAMEBUFFER) { this.drawFb = f; this.readFb = f; }
    else if (target === GL.READ_FRAMEBUFFER) this.readFb = f;
    else this.drawFb = f;
  }
  framebufferTexture2D(target: number, attachment: number, _textarget: number, tex: FakeTexture | null): void {
    const f = target === GL.READ_FRAMEBUFFER ? this.readFb : this.drawFb;
    if (f && attachment === GL.COLOR_ATTACHMENT0) f.color = tex;
  }
  checkFramebufferStatus(): number { return GL.FRAMEBUFFER_COMPLETE; }
  createRenderbuffer(): object { return { __rb: nextId++ }; }
  bindRenderbuffer(): void {}
  renderbufferStorage(): void {}
  framebufferRenderbuffer(): void {}
  deleteRenderbuffer(): void {}
  invalidateFramebuffer(): void {}
  drawBuffers(): void {}
  readBuffer(): void {}
  readPixels(x: number, y: number, w: number, h: number, format: number, type: number, dst: ArrayBufferView, dstOffset = 0): void {
    this.stats.readPixels++;
    const tex = this.readFb?.color;
    if (!tex?.data) return;
    const elem = (dst as unknown as { BYTES_PER_ELEMENT?: number }).BYTES_PER_ELEMENT ?? 1;
    const out = new Uint8Array(dst.buffer, dst.byteOffset + dstOffset * elem);
    const sbpp = bytesPerPixel(tex.format, tex.type);
    const dbpp = bytesPerPixel(format, type);
    if (format === tex.format && type === tex.type) {
      for (let r = 0; r < h; r++) {
        const so = ((y + r) * tex.width + x) * sbpp;
        out.set(tex.data.subarray(so, so + w * sbpp), r * w * dbpp);
      }
      return;
    }
    if (tex.format === GL.RGBA && tex.type === GL.UNSIGNED_BYTE && format === GL.RGBA && type === GL.FLOAT) {
      const f = new Float32Array(out.buffer, out.byteOffset, w * h * 4);
      for (let r = 0; r < h; r++) {
        const so = ((y + r) * tex.width + x) * 4;
        for (let c = 0; c < w * 4; c++) f[r * w * 4 + c] = tex.data[so + c] / 255;
      }
      return;
    }
    throw new Error(`fake WebGL readPixels: unsupported conversion ${tex.format}/${tex.type} -> ${format}/${type}`);
  }

  // --- programs and drawing: accepted, never executed ---
  createShader(): object { return { __sh: nextId++ }; }
  shaderSource(): void {}
  compileShader(): void {}
  deleteShader(): void {}
  getShaderParameter(): boolean { return true; }
  getShaderInfoLog(): string { return ''; }
  createProgram(): object { return { __prog: nextId++ }; }
  attachShader(): void {}
  detachShader(): void {}
  linkProgram(): void {}
  deleteProgram(): void {}
  useProgram(): void {}
  validateProgram(): void {}
  getProgramParameter(_p: unknown, name: number): unknown {
    return name === GL.LINK_STATUS || name === GL.VALIDATE_STATUS ? true : 0;
  }
  getProgramInfoLog(): string { return ''; }
  getUniformLocation(): object { return { __u: nextId++ }; }
  getAttribLocation(): number { return 0; }
  bindAttribLocation(): void {}
  getActiveUniform(): null { return null; }
  getActiveAttrib(): null { return null; }
  uniform1i(): void {}
  uniform1f(): void {}
  uniform2f(): void {}
  uniform4f(): void {}
  uniformMatrix4fv(): void {}
  createBuffer(): object { return { __buf: nextId++ }; }
  bindBuffer(): void {}
  bufferData(): void {}
  bufferSubData(): void {}
  deleteBuffer(): void {}
  createVertexArray(): object { return { __vao: nextId++ }; }
  bindVertexArray(): void {}
  deleteVertexArray(): void {}
  vertexAttribPointer(): void {}
  enableVertexAttribArray(): void {}
  disableVertexAttribArray(): void {}
  viewport(): void {}
  scissor(): void {}
  clearColor(): void {}
  clear(): void {}
  enable(): void {}
  disable(): void {}
  blendFunc(): void {}
  colorMask(): void {}
  depthMask(): void {}
  drawArrays(): void { this.stats.draws++; }
  drawElements(): void { this.stats.draws++; }
  flush(): void {}
  finish(): void {}
  fenceSync(): object { return { __sync: nextId++ }; }
  deleteSync(): void {}
  clientWaitSync(): number { return GL.ALREADY_SIGNALED; }
  waitSync(): void {}
  getSyncParameter(_s: unknown, p: number): number { return p === GL.SYNC_STATUS ? GL.SIGNALED : 0; }
  isSync(s: unknown): boolean { return typeof s === 'object' && s !== null && '__sync' in s; }
}
// WebGL exposes its enum values as instance properties (gl.TEXTURE_2D, ...): emscripten reads them.
for (const [k, v] of Object.entries(GL)) {
  Object.defineProperty(FakeWebGL2.prototype, k, { value: v, enumerable: false, writable: false });
}

export interface FakeCanvas {
  width: number;
  height: number;
  getContext(kind: string): FakeWebGL2 | null;
  addEventListener(): void;
  removeEventListener(): void;
  /** The context, once created (for stats). */
  ctx: FakeWebGL2 | null;
}

export function createFakeCanvas(): FakeCanvas {
  const canvas: FakeCanvas = {
    width: 1,
    height: 1,
    ctx: null,
    addEventListener() {},
    removeEventListener() {},
    getContext(kind: string) {
      if (kind !== 'webgl2' && kind !== 'webgl') return null;
      if (!canvas.ctx) {
        // Properties we do not implement read as undefined instead of throwing (emscripten probes a few).
        canvas.ctx = new Proxy(new FakeWebGL2(canvas), {
          get(target, prop, receiver) {
            if (typeof prop === 'symbol' || prop in target) return Reflect.get(target, prop, receiver) as unknown;
            return undefined;
          },
        });
      }
      return canvas.ctx;
    },
  };
  return canvas;
}
