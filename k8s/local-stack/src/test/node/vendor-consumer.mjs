// A third-party recognizer written from docs/wire.md alone, with npm's kafkajs and avsc: it logs in
// as a vendor principal over SASL_SSL, decodes the site's enrollment and query records and checks
// them against what the gateway published, then tries what it must not be able to do.
// Input (environment): BOOTSTRAP, CA_FILE, VENDOR_USER, VENDOR_PASSWORD, GROUP, SITE, OTHER_SITE,
// SCHEMA_DIR (broker-config/schemas), EXPECTED (a JSON file: the published records).
// Output: one JSON line per check on stdout; exit status 0 only if every check held.
import fs from 'node:fs';
import path from 'node:path';
import avro from 'avsc';
import kafkajs from 'kafkajs';
import lz4 from 'lz4js';

const { Kafka, CompressionTypes, CompressionCodecs, logLevel } = kafkajs;
const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is not set`);
  return v;
};

// The gateways compress with lz4 (docs/wire.md, "Compression"); kafkajs brings no lz4 codec.
CompressionCodecs[CompressionTypes.LZ4] = () => ({
  async compress(encoder) { return Buffer.from(lz4.compress(encoder.buffer)); },
  async decompress(buffer) { return Buffer.from(lz4.decompress(buffer)); },
});

// CRC-64-AVRO of the Parsing Canonical Form, as the Avro specification defines it.
const EMPTY = 0xc15d213aa4d7a795n;
const TABLE = Array.from({ length: 256 }, (_, i) => {
  let fp = BigInt(i);
  for (let j = 0; j < 8; j++) fp = (fp >> 1n) ^ (EMPTY & -(fp & 1n));
  return fp;
});
const crc64 = (s) => {
  let fp = EMPTY;
  for (const b of Buffer.from(s, 'utf8')) fp = (fp >> 8n) ^ TABLE[Number((fp ^ BigInt(b)) & 0xffn)];
  return fp;
};

const schemaDir = env('SCHEMA_DIR');
const load = (f) => avro.Type.forSchema(JSON.parse(fs.readFileSync(path.join(schemaDir, f), 'utf8')));
const reader = load('PerturbedFace.avsc');
// Writer schemas by the 8 little-endian fingerprint bytes that follow C3 01.
const writers = new Map();
for (const f of ['PerturbedFace.avsc', 'history/PerturbedFace-r1.avsc']) {
  const w = load(f);
  const fp = Buffer.alloc(8);
  fp.writeBigUInt64LE(crc64(JSON.stringify(w.schema())));
  writers.set(fp.toString('hex'), f === 'PerturbedFace.avsc' ? null : reader.createResolver(w));
}

function decode(value) {
  if (value.length < 10 || value[0] !== 0xc3 || value[1] !== 0x01) throw new Error('not an Avro single-object record');
  const key = value.subarray(2, 10).toString('hex');
  if (!writers.has(key)) throw new Error(`unknown schema fingerprint ${key}`);
  const resolver = writers.get(key);
  return resolver ? reader.fromBuffer(value.subarray(10), resolver) : reader.fromBuffer(value.subarray(10));
}

let failed = 0;
const report = (check, ok, detail) => {
  if (!ok) failed++;
  console.log(JSON.stringify({ check, ok, ...detail }));
};

const base = {
  clientId: 'vendor-node',
  brokers: [env('BOOTSTRAP')],
  ssl: { ca: [fs.readFileSync(env('CA_FILE'), 'utf8')] },
  connectionTimeout: 10000,
  authenticationTimeout: 10000,
  retry: { retries: 0 },
  logLevel: logLevel.NOTHING,
};
// A fresh object per client: kafkajs caches its authenticator, password included, on the sasl
// object it is given, so a copy of a used one with another password would still log in.
const credentials = (password) => ({ mechanism: 'scram-sha-512', username: env('VENDOR_USER'), password });
const site = env('SITE');
const enrollment = `privface.${site}.enrollment`;
const query = `privface.${site}.query`;

// 1. Read and check every published record, in the vendor's own consumer group.
const expected = JSON.parse(fs.readFileSync(env('EXPECTED'), 'utf8'));
const kafka = new Kafka({ ...base, sasl: credentials(env('VENDOR_PASSWORD')) });
const consumer = kafka.consumer({ groupId: env('GROUP'), retry: { retries: 2 } });
const seen = new Map();
await consumer.connect();
await consumer.subscribe({ topics: [enrollment, query], fromBeginning: true });
const done = new Promise((resolve) => {
  consumer.run({
    eachMessage: async ({ topic, message }) => {
      try {
        const f = decode(message.value);
        seen.set(f.eventId, { topic, key: message.key.toString('utf8'), f });
      } catch (e) {
        report(`decode ${topic}`, false, { error: e.message });
      }
      if (expected.every((x) => seen.has(x.eventId))) resolve();
    },
  });
});
await Promise.race([done, new Promise((r) => setTimeout(r, 60000))]);
await consumer.disconnect();
for (const x of expected) {
  const s = seen.get(x.eventId);
  if (!s) {
    report(`read ${x.eventId}`, false, { error: 'never read' });
    continue;
  }
  const f = s.f;
  const problems = [];
  const eq = (name, a, b) => { if (a !== b) problems.push(`${name}: ${a} != ${b}`); };
  eq('topic', s.topic, x.kind === 'ENROLLMENT' ? enrollment : query);
  eq('key', s.key, x.cameraId);
  eq('kind', f.kind, x.kind);
  eq('siteId', f.siteId, site);
  eq('cameraId', f.cameraId, x.cameraId);
  eq('trackId', f.trackId, x.trackId);
  eq('enrollmentLabel', f.enrollmentLabel, x.enrollmentLabel);
  eq('mechanism.name', f.mechanism.name, x.mechanism);
  eq('epsilonPerFace', f.mechanism.epsilonPerFace, x.epsilonPerFace);
  eq('epsilonPerCoordinate', f.mechanism.epsilonPerCoordinate, x.epsilonPerCoordinate);
  eq('basisId', f.mechanism.basisId, x.basisId);
  eq('dimension', f.dimension, x.vector.length);
  // Floats travel as IEEE single precision; the expected values are those same floats.
  f.vector.forEach((v, i) => eq(`vector[${i}]`, v, Math.fround(x.vector[i])));
  report(`read ${x.kind} ${x.eventId}`, problems.length === 0, { problems });
}

// 2. What the broker must refuse; each check records the broker's error.
async function refused(check, expectedError, attempt) {
  try {
    await attempt();
    report(check, false, { error: 'allowed' });
  } catch (e) {
    const text = `${e.name}: ${e.type ?? ''} ${e.message}`;
    report(check, expectedError.test(text), { error: text });
  }
}
const admin = (config) => new Kafka(config).admin();
async function metadata(config, topic) {
  const a = admin(config);
  try {
    await a.connect();
    await a.fetchTopicMetadata({ topics: [topic] });
  } finally {
    await a.disconnect();
  }
}
async function subscribe(topic) {
  const c = kafka.consumer({ groupId: `${env('GROUP')}-denied` });
  try {
    await c.connect();
    await c.subscribe({ topics: [topic], fromBeginning: true });
    await c.run({ eachMessage: async () => {} });
    await new Promise((r) => setTimeout(r, 3000));
  } finally {
    await c.disconnect();
  }
}
async function write(topic) {
  const p = kafka.producer({ retry: { retries: 0 } });
  try {
    await p.connect();
    await p.send({ topic, messages: [{ key: 'forged', value: Buffer.from([0xc3, 0x01]) }] });
  } finally {
    await p.disconnect();
  }
}

await refused('no credentials', /ConnectionClosed|closed|Connection error|SASL|disconnect/i, () => metadata(base, enrollment));
const wrongPassword = { ...base, sasl: credentials(`wrong-${env('VENDOR_PASSWORD')}`) };
await refused('wrong password', /SASL.*(invalid credentials|Authentication failed)/is, async () => {
  const p = new Kafka(wrongPassword).producer({ retry: { retries: 0 } });
  try {
    await p.connect();
    await p.send({ topic: env('RESULTS_TOPIC'), messages: [{ key: 'x', value: Buffer.from([1]) }] });
  } finally {
    await p.disconnect();
  }
});
await refused(`read privface.${env('OTHER_SITE')}.enrollment`, /TOPIC_AUTHORIZATION_FAILED|not authorized/i,
  () => subscribe(`privface.${env('OTHER_SITE')}.enrollment`));
await refused(`read privface.${site}.control`, /TOPIC_AUTHORIZATION_FAILED|not authorized/i,
  () => subscribe(`privface.${site}.control`));
await refused(`write ${enrollment}`, /TOPIC_AUTHORIZATION_FAILED|not authorized/i, () => write(enrollment));
await refused(`write ${query}`, /TOPIC_AUTHORIZATION_FAILED|not authorized/i, () => write(query));
await refused(`write privface.${site}.control`, /TOPIC_AUTHORIZATION_FAILED|not authorized/i,
  () => write(`privface.${site}.control`));

process.exit(failed === 0 ? 0 : 1);
