import { expect } from 'chai';
import fs from 'node:fs';
import sharp from 'sharp';
import { CORPUS } from '../fixtures/images.js';
import { request, upload } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';

describe('passport smoke', function () {
  this.timeout(120_000);
  let svc: TestService;
  before(async () => {
    svc = await TestService.start({ workerQueues: 'upload-finalize,transform,passport', env: { DEMO_TOKEN: 'demo-token-123' } });
  });
  after(async () => svc?.stop());

  it('processes an uploaded portrait', async () => {
    const bytes = fs.readFileSync(`${CORPUS}faces/02_grace_hopper.jpg`);
    const t0 = Date.now();
    const res = await upload(svc.baseUrl, { path: '/passport-photo/demo/process', bytes, filename: 'g.jpg', fields: { country: 'usa', include_print_sheet: 'true' }, headerName: 'X-Demo-Token', key: 'demo-token-123' });
    console.log('passport ms', Date.now() - t0);
    expect(res.status, JSON.stringify(res.body).slice(0, 500)).to.equal(200);
    const photo = Buffer.from(res.body.photo.data_url.split(',')[1], 'base64');
    const meta = await sharp(photo).metadata();
    expect([meta.width, meta.height, meta.density]).to.deep.equal([600, 600, 300]);
    expect(res.body.print_sheet.width).to.equal(1800);
    const specs = await request(svc.url('/passport-photo/specs'));
    expect(specs.body.countries).to.deep.equal(['usa', 'india', 'india_visa', 'uk', 'schengen_visa', 'canada', 'china', 'japan']);
  });
});
