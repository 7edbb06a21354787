// Set B projects (spec 2.5): create, list, rename (slug follows), duplicate slug 409,
// delete with moveImagesToDefault true (images move to `default`) and false (images deleted from
// listing, storage, catalog and usage), and the undeletable default project.
import { expect } from 'chai';
import type { Credential } from '../../src/catalog/api-keys.js';
import { request } from '../harness/http.js';
import { TestService } from '../harness/test-service.js';
import type { Project } from '../../src/client/types.js';
import { cdnUpload, expectDetail, listAll, storedObjects, tinyJpeg, usageOf, type CdnUploadBody } from './set-b-helpers.js';

const PROJECT_KEYS = ['projectId', 'name', 'slug', 'description', 'image_count', 'created_at'];

type ProjectBody = Project;

describe('set B projects', function () {
  this.timeout(60_000);
  let svc: TestService;
  let user: Credential;

  before(async () => {
    svc = await TestService.start({ env: { WORKER_CONCURRENCY: '4' } });
    user = await svc.createUser();
  });
  after(async () => svc?.stop());

  const call = (method: string, json?: unknown) => request(svc.url('/cdn/projects'), { method, key: user.key, json });
  const listProjects = async (): Promise<ProjectBody[]> => {
    const res = await request(svc.url('/cdn/projects'), { key: user.key });
    expect(res.status).to.equal(200);
    expect(Object.keys(res.body)).to.deep.equal(['projects']);
    for (const p of res.body.projects) expect(Object.keys(p).sort()).to.deep.equal([...PROJECT_KEYS].sort());
    return res.body.projects;
  };
  async function uploadInto(project: string, count: number, seed: number): Promise<CdnUploadBody[]> {
    const out: CdnUploadBody[] = [];
    for (let i = 0; i < count; i++) out.push(await cdnUpload(svc, user.key, await tinyJpeg(seed + i, 30, 20), { project, filename: `${project}-${seed + i}.jpg` }));
    return out;
  }

  it('every user has a default project; create answers the project body', async () => {
    const initial = await listProjects();
    expect(initial.map((p) => p.slug)).to.deep.equal(['default']);
    expect(initial[0]).to.deep.include({ name: 'Default', image_count: 0 });

    const created = await call('POST', { name: 'Summer Trip — Ærø 2024', description: 'Beach photos' });
    expect(created.status).to.equal(200);
    expect(Object.keys(created.body).sort()).to.deep.equal([...PROJECT_KEYS].sort());
    expect(created.body).to.deep.include({ name: 'Summer Trip — Ærø 2024', slug: 'summer-trip-aero-2024', description: 'Beach photos', image_count: 0 });
    expect(created.body.projectId).to.match(/^[0-9a-f]{24}$/);
    expect(Date.now() - Date.parse(created.body.created_at)).to.be.within(0, 60_000);
    const noDescription = await call('POST', { name: 'Bare' });
    expect(noDescription.body).to.deep.include({ slug: 'bare', description: null });
    expect((await listProjects()).map((p) => p.slug)).to.deep.equal(['default', 'summer-trip-aero-2024', 'bare']);
  });

  it('rename changes the slug (images follow, the old slug lists nothing); description-only update keeps it', async () => {
    const created = (await call('POST', { name: 'Work Stuff' })).body as ProjectBody;
    const images = await uploadInto('work-stuff', 2, 100);
    const renamed = await call('PATCH', { projectId: created.projectId, name: 'Client Work' });
    expect(renamed.status).to.equal(200);
    expect(renamed.body).to.deep.equal({ ...created, name: 'Client Work', slug: 'client-work', image_count: 2 });
    const listed = await listAll(svc, user.key, { project: 'client-work' });
    expect(listed.map((i) => i.imageId)).to.deep.equal(images.map((i) => i.imageId).reverse());
    expect(listed.map((i) => i.project)).to.deep.equal(['client-work', 'client-work']);
    expect(await listAll(svc, user.key, { project: 'work-stuff' })).to.deep.equal([]);
    // Uploading to the new slug lands in the same project.
    const third = await cdnUpload(svc, user.key, await tinyJpeg(110), { project: 'client-work', filename: 'third.jpg' });
    expect(third.project).to.equal('client-work');
    const described = await call('PATCH', { projectId: created.projectId, description: 'For clients' });
    expect(described.body).to.deep.include({ name: 'Client Work', slug: 'client-work', description: 'For clients', image_count: 3 });
    const cleared = await call('PATCH', { projectId: created.projectId, name: null, description: null });
    expect(cleared.body).to.deep.include({ name: 'Client Work', slug: 'client-work', description: null });
  });

  it('a second project with the same slug is 409 (create and rename); nothing changes', async () => {
    const a = (await call('POST', { name: 'Alpha Beta' })).body as ProjectBody;
    const b = (await call('POST', { name: 'Gamma' })).body as ProjectBody;
    expectDetail(await call('POST', { name: 'alpha beta' }), 409, /alpha-beta/);
    expectDetail(await call('POST', { name: 'ALPHA_BETA!' }), 409, /alpha-beta/);
    expectDetail(await call('PATCH', { projectId: b.projectId, name: 'Alpha  Beta' }), 409, /alpha-beta/);
    const projects = await listProjects();
    expect(projects.filter((p) => p.slug === 'alpha-beta')).to.deep.equal([a]);
    expect(projects.find((p) => p.projectId === b.projectId)).to.deep.equal(b);
    // Renaming a project to its own slug (different spelling) is not a conflict.
    const same = await call('PATCH', { projectId: a.projectId, name: 'ALPHA beta' });
    expect(same.status).to.equal(200);
    expect(same.body).to.deep.include({ name: 'ALPHA beta', slug: 'alpha-beta' });
  });

  it('delete with moveImagesToDefault: true moves its images to default and keeps every byte', async () => {
    const project = (await call('POST', { name: 'Moving' })).body as ProjectBody;
    const images = await uploadInto('moving', 3, 200);
    const defaultBefore = await listAll(svc, user.key, { project: 'default' });
    const storageBefore = await storedObjects(svc, user.userId);
    const usageBefore = await usageOf(svc, user.key);

    const res = await call('DELETE', { projectId: project.projectId, moveImagesToDefault: true });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ deleted: true, projectId: project.projectId, images_moved: 3, images_deleted: 0 });

    expect((await listProjects()).map((p) => p.slug)).to.not.include('moving');
    const defaultAfter = await listAll(svc, user.key, { project: 'default' });
    expect(defaultAfter.map((i) => i.imageId)).to.deep.equal([...images.map((i) => i.imageId).reverse(), ...defaultBefore.map((i) => i.imageId)]);
    for (const listed of defaultAfter) expect(listed.project).to.equal('default');
    expect(await listAll(svc, user.key, { project: 'moving' })).to.deep.equal([]);
    const def = (await listProjects()).find((p) => p.slug === 'default');
    expect(def?.image_count).to.equal(defaultAfter.length);
    expect(await storedObjects(svc, user.userId)).to.deep.equal(storageBefore);
    expect(await usageOf(svc, user.key)).to.deep.equal(usageBefore);
    for (const img of images) expect((await request(img.public_url)).status).to.equal(200);
  });

  it('delete with moveImagesToDefault: false (and by default) deletes its images from listing, storage and usage', async () => {
    for (const body of [{ moveImagesToDefault: false }, {}]) {
      const name = `Doomed ${Object.keys(body).length}`;
      const project = (await call('POST', { name })).body as ProjectBody;
      const keep = await cdnUpload(svc, user.key, await tinyJpeg(300 + Object.keys(body).length), { filename: `keep-${project.slug}.jpg` });
      const images = await uploadInto(project.slug, 3, 310 + 10 * Object.keys(body).length);
      for (const img of images) expect((await request(svc.url(`/cdn/${img.imageId}?w=10&f=png`))).status).to.equal(200);
      await svc.derivativesSettled(user.userId);
      const usageBefore = await usageOf(svc, user.key);
      const allBefore = await listAll(svc, user.key);
      // Their derivatives' bytes leave storage_bytes with them (docs/limits.md).
      const doomedKeys = images.map((i) => i.public_url.slice(svc.config.cdnUrl.length + 1) + '&v=');
      const doomedDerivativeBytes = (await storedObjects(svc, user.userId)).filter((o) => doomedKeys.some((k) => o.key.startsWith(k))).reduce((s, o) => s + o.size, 0);
      expect(doomedDerivativeBytes).to.be.above(0);

      const res = await call('DELETE', { projectId: project.projectId, ...body });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ deleted: true, projectId: project.projectId, images_moved: 0, images_deleted: 3 });

      const gone = new Set(images.map((i) => i.imageId));
      expect((await listAll(svc, user.key)).map((i) => i.imageId)).to.deep.equal(allBefore.map((i) => i.imageId).filter((id) => !gone.has(id)));
      const keys = (await storedObjects(svc, user.userId)).map((o) => o.key);
      for (const img of images) {
        const key = img.public_url.slice(svc.config.cdnUrl.length + 1);
        expect(keys.filter((k) => k.startsWith(key)), `${key} and its derivatives`).to.deep.equal([]);
        expect((await request(img.public_url)).status).to.equal(404);
      }
      expect(keys).to.include(keep.public_url.slice(svc.config.cdnUrl.length + 1));
      const usageAfter = await usageOf(svc, user.key);
      expect(usageAfter.storage_bytes).to.equal(usageBefore.storage_bytes - images.reduce((s, i) => s + i.size, 0) - doomedDerivativeBytes);
      expect(usageAfter.derivative_bytes).to.equal(usageBefore.derivative_bytes - doomedDerivativeBytes);
      expect(usageAfter.image_count).to.equal(usageBefore.image_count - 3);
      expect(usageAfter.derivative_count).to.equal(usageBefore.derivative_count - 3);
      expect((await listProjects()).map((p) => p.slug)).to.not.include(project.slug);
      expectDetail(await call('DELETE', { projectId: project.projectId }), 404, /project/i);
    }
  });

  it('the default project cannot be deleted or renamed (403); its description can change', async () => {
    const def = (await listProjects()).find((p) => p.slug === 'default')!;
    expectDetail(await call('DELETE', { projectId: def.projectId, moveImagesToDefault: true }), 403, /default project cannot be deleted/i);
    expectDetail(await call('DELETE', { projectId: def.projectId }), 403, /default project cannot be deleted/i);
    expectDetail(await call('PATCH', { projectId: def.projectId, name: 'Renamed' }), 403, /default project cannot be renamed/i);
    const described = await call('PATCH', { projectId: def.projectId, description: 'Everything else' });
    expect(described.body).to.deep.include({ slug: 'default', description: 'Everything else' });
    expect((await listProjects()).filter((p) => p.slug === 'default')).to.have.length(1);
  });
});
