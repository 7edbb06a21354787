// The access log line is written without pino's per-call serialisation; it must be the line pino
// writes for the same fields, at the same level, and only when that level is enabled.
import { expect } from 'chai';
import type { ServerResponse } from 'node:http';
import { pino } from 'pino';
import { loggedUrl, redactUrl, requestLogger } from '../../../src/web/middleware/request-context.js';

function capture(level: string) {
  const lines: string[] = [];
  const log = pino({ name: 'pictor-web', level, base: { pid: 4242, service: 'pictor-web' }, timestamp: () => ',"time":1700000000000' }, { write: (line: string) => lines.push(line) });
  return { log, lines };
}

/** A response as `written` reads it once it has closed. */
const closed = (statusCode: number, writableFinished = true) => ({ statusCode, writableFinished }) as ServerResponse;

describe('request log line', () => {
  const cases: { status: number; finished: boolean; level: 'info' | 'warn' | 'error'; msg: string }[] = [
    { status: 200, finished: true, level: 'info', msg: 'request completed' },
    { status: 304, finished: true, level: 'info', msg: 'request completed' },
    { status: 404, finished: true, level: 'warn', msg: 'request completed' },
    { status: 503, finished: true, level: 'error', msg: 'request completed' },
    { status: 200, finished: false, level: 'warn', msg: 'request aborted' },
  ];
  for (const c of cases) {
    it(`is pino's own line for a ${c.status}${c.finished ? '' : ' cut short'} (${c.level})`, () => {
      const ours = capture('info');
      const theirs = capture('info');
      const url = redactUrl('/cdn/abc?w=800&sig=secret&note="quoted"\\é\u2028');
      const started = performance.now() - 3.2;
      requestLogger(ours.log).written(closed(c.status, c.finished), 'id-1.x', 'GET', loggedUrl(url), started);
      const responseTime = (JSON.parse(ours.lines[0]) as { responseTime: number }).responseTime;
      expect(responseTime).to.be.within(3, 1000);
      theirs.log[c.level]({ req: { id: 'id-1.x', method: 'GET', url }, res: { statusCode: c.status }, responseTime }, c.msg);
      expect(ours.lines).to.deep.equal(theirs.lines);
      expect(ours.lines[0]).to.include('sig=[redacted]').and.not.include('secret');
    });
  }

  it('writes nothing below the logger level', () => {
    const { log, lines } = capture('warn');
    const requests = requestLogger(log);
    requests.written(closed(200), 'a', 'GET', loggedUrl('/x'), performance.now());
    expect(lines).to.deep.equal([]);
    requests.written(closed(404), 'b', 'GET', loggedUrl('/x'), performance.now());
    expect(lines).to.have.length(1);
    expect(JSON.parse(lines[0])).to.include({ level: 40, msg: 'request completed' });
  });
});
