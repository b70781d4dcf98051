/**
 * `connect`: the gateway as an OAuth client of upstreams' authorization servers, when users connect
 * `per_user` upstreams (docs/oauth.md, "Connecting upstreams"). Which client the gateway uses at a
 * server, in this order: the client an upstream's configuration names (`auth.oauth.clientId`), else its
 * Client ID Metadata Document (when the server's metadata says `client_id_metadata_document_supported`
 * and the document can be published), else dynamic registration (RFC 7591).
 */
import { z } from 'zod';

export const ConnectConfigSchema = z.strictObject({
  /**
   * Publish the gateway's client metadata document at `<http.publicBaseUrl>/v1/connect/client-metadata.json`
   * and use that URL as the client id at servers that accept such documents. Only when `publicBaseUrl`
   * is `https` (the draft requires it), unless `allowLoopbackHttp`.
   */
  clientMetadataDocument: z.boolean().default(true),
  /** `client_name` in the metadata document and in dynamic registrations. */
  clientName: z.string().min(1).max(100).default('TaskRouter gateway'),
  /**
   * Also publish and use the document when `publicBaseUrl` is `http` on a loopback address (127.0.0.1,
   * ::1, localhost). For tests and one-machine development only: no real authorization server fetches
   * such a URL. Default false.
   */
  allowLoopbackHttp: z.boolean().default(false),
});
export type ConnectConfig = z.infer<typeof ConnectConfigSchema>;

/** The URL of the gateway's client metadata document, or undefined when it is not published. */
export function clientMetadataDocumentUrl(
  publicBaseUrl: string | undefined,
  connect: ConnectConfig,
): string | undefined {
  if (publicBaseUrl === undefined || !connect.clientMetadataDocument) return undefined;
  const url = new URL(publicBaseUrl);
  const loopback = ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(connect.allowLoopbackHttp && url.protocol === 'http:' && loopback))
    return undefined;
  return `${publicBaseUrl}/v1/connect/client-metadata.json`;
}
