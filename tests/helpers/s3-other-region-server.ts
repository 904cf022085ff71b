/**
 * A loopback HTTP server that answers every S3 request as AWS answers for a bucket that lives in
 * another region than the one the request was meant for. RGW serves any region name, so this is
 * how a test sees the answers a wrong `region` gets from AWS:
 *
 * - `redirect` (a request to another region's endpoint): `301 PermanentRedirect` with the
 *   `x-amz-bucket-region` header and AWS's XML error body naming the endpoint to use; a HEAD (a
 *   HEAD bucket or HEAD object) gets the 301 and the header without a body, as from AWS.
 * - `wrong-signing-region` (a request signed with SigV4 for another region, through an endpoint
 *   that serves the bucket): `400 AuthorizationHeaderMalformed`, the body naming the expected
 *   `<Region>`, with the `x-amz-bucket-region` header; a HEAD gets the 400 without a body. A
 *   request signed for the bucket's region is answered 501 (this server stores nothing).
 *
 * Bodies are read to their end before the answer, as AWS does for a PUT. No credential is checked.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type OtherRegionAnswer = 'redirect' | 'wrong-signing-region';

export interface OtherRegionRequest {
  readonly method: string;
  readonly path: string;
  /** The region of the SigV4 credential scope (header or presigned query), or null when unsigned. */
  readonly signedRegion: string | null;
  readonly status: number;
}

export interface S3OtherRegionServer {
  /** `http://127.0.0.1:<port>`: an S3 endpoint to use path-style. */
  readonly endpoint: string;
  /** The requests answered, in order. */
  readonly requests: readonly OtherRegionRequest[];
  close(): Promise<void>;
}

/** `AWS4-HMAC-SHA256 Credential=AKID/20260101/eu-west-1/s3/aws4_request, …` → `eu-west-1`. */
function signedRegionOf(req: IncomingMessage): string | null {
  const credential = /Credential=[^/,\s]+\/\d{8}\/([^/,\s]+)\/s3\/aws4_request/.exec(req.headers.authorization ?? '')?.[1];
  if (credential !== undefined) return credential;
  const query = new URL(req.url ?? '/', 'http://x').searchParams.get('X-Amz-Credential');
  return query === null ? null : (query.split('/')[2] ?? null);
}

/** The bucket of a path-style request (`/bucket/key`). */
function bucketOf(req: IncomingMessage): string {
  return decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname.split('/')[1] ?? '');
}

const requestId = (): string => Math.random().toString(16).slice(2, 18).toUpperCase();

function xmlError(code: string, message: string, fields: Record<string, string>): string {
  const extra = Object.entries(fields).map(([k, v]) => `<${k}>${v}</${k}>`).join('');
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message>${extra}<RequestId>${requestId()}</RequestId><HostId>${Buffer.from(requestId()).toString('base64')}</HostId></Error>`;
}

/** Starts a server for buckets in `bucketRegion` (e.g. `eu-west-1`) that answers as `answer` describes. */
export async function startS3OtherRegionServer(bucketRegion: string, answer: OtherRegionAnswer): Promise<S3OtherRegionServer> {
  const requests: OtherRegionRequest[] = [];
  const respond = (req: IncomingMessage, res: ServerResponse): void => {
    const signedRegion = signedRegionOf(req);
    const bucket = bucketOf(req);
    const head = req.method === 'HEAD';
    let status: number;
    let body = '';
    if (answer === 'redirect') {
      status = 301;
      body = xmlError('PermanentRedirect', 'The bucket you are attempting to access must be addressed using the specified endpoint. Please send all future requests to this endpoint.', {
        Endpoint: `${bucket}.s3.${bucketRegion}.amazonaws.com`, Bucket: bucket,
      });
    } else if (signedRegion !== bucketRegion) {
      status = 400;
      body = xmlError('AuthorizationHeaderMalformed', `The authorization header is malformed; the region '${signedRegion ?? ''}' is wrong; expecting '${bucketRegion}'`, { Region: bucketRegion });
    } else {
      status = 501;
      body = xmlError('NotImplemented', 'This test server stores nothing', {});
    }
    requests.push({ method: req.method ?? '', path: req.url ?? '', signedRegion, status });
    res.writeHead(status, {
      'x-amz-bucket-region': bucketRegion,
      'x-amz-request-id': requestId(),
      ...(head ? {} : { 'content-type': 'application/xml', 'content-length': String(Buffer.byteLength(body)) }),
    });
    res.end(head ? undefined : body);
  };
  const server = createServer((req, res) => {
    req.on('error', () => res.destroy());
    req.resume();
    req.on('end', () => respond(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
