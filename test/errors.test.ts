import { bootTestApp, TestApp } from './support/app';
import { bearer } from './support/config';

describe('errors', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await bootTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const shape = (statusCode: number, error: string) => ({ statusCode, error, message: expect.any(String) });

  it('answers malformed JSON with 400 in the error shape', async () => {
    const res = await t
      .http()
      .post('/v1/api-keys')
      .set(bearer(t.adminKey))
      .set('Content-Type', 'application/json')
      .send('{"name": ')
      .expect(400);
    expect(res.body).toEqual(shape(400, 'Bad Request'));
    expect(res.body.message).toMatch(/JSON/);
  });

  it('rejects unknown fields, naming them, and writes nothing', async () => {
    const res = await t.http().post('/v1/api-keys').set(bearer(t.adminKey)).send({ name: 'x', scope: 'all' }).expect(400);
    expect(res.body.message).toBe('scope is not allowed (unknown field)');
    const list = await t.http().get('/v1/api-keys').set(bearer(t.adminKey)).expect(200);
    expect(list.body.data.map((k: { name: string }) => k.name)).not.toContain('x');
  });

  it('names the field with the wrong type', async () => {
    const res = await t.http().post('/v1/workspaces').set(bearer(t.adminKey)).send({ name: 42 }).expect(400);
    expect(res.body.message).toMatch(/^name must be a string/);
  });

  it('answers an oversized body with 413 in the error shape', async () => {
    const res = await t
      .http()
      .post('/v1/api-keys')
      .set(bearer(t.adminKey))
      .send({ name: 'x'.repeat(1_100_000) })
      .expect(413);
    expect(res.body).toEqual(shape(413, 'Payload Too Large'));
    expect(res.body.message).toMatch(/1 MB/);
  });

  it('answers an unknown route with a JSON 404', async () => {
    const res = await t.http().get('/v1/nothing-here').set(bearer(t.adminKey)).expect(404);
    expect(res.body).toEqual(shape(404, 'Not Found'));
  });

  it('never sends a stack trace', async () => {
    const res = await t.http().post('/v1/api-keys').set(bearer(t.adminKey)).set('Content-Type', 'application/json').send('[[[').expect(400);
    expect(JSON.stringify(res.body)).not.toMatch(/at .*\.(js|ts):\d+/);
  });
});
