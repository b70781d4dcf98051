/**
 * The gateway's client registrations at upstreams' authorization servers (docs/oauth.md, "Connecting
 * upstreams"): one per issuer and redirect URI, made by dynamic registration the first time a user
 * connects an upstream that issuer protects, and reused after. The client secret is sealed.
 */
import type { Kysely } from 'kysely';
import type { Cipher } from './cipher';
import { newId } from './control-plane/context';
import type { Database } from './schema';

export interface StoredClient {
  clientId: string;
  clientSecret?: string;
}

const aad = (id: string) => `upstream-oauth-client:${id}`;

export class OAuthClientStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly cipher: Cipher,
  ) {}

  async get(issuer: string, redirectUri: string): Promise<StoredClient | undefined> {
    const row = await this.db
      .selectFrom('upstream_oauth_clients')
      .selectAll()
      .where('issuer', '=', issuer)
      .where('redirect_uri', '=', redirectUri)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      clientId: row.client_id,
      ...(row.client_secret !== null && {
        clientSecret: this.cipher.open(row.client_secret, aad(row.id)).toString('utf8'),
      }),
    };
  }

  /** Keeps a registration; when another replica registered at the same time, its registration wins. */
  async save(issuer: string, redirectUri: string, client: StoredClient): Promise<StoredClient> {
    const id = newId('ocl');
    await this.db
      .insertInto('upstream_oauth_clients')
      .values({
        id,
        issuer,
        redirect_uri: redirectUri,
        client_id: client.clientId,
        client_secret:
          client.clientSecret === undefined
            ? null
            : this.cipher.seal(Buffer.from(client.clientSecret), aad(id)),
        created_at: new Date().toISOString(),
      })
      .onConflict((oc) => oc.columns(['issuer', 'redirect_uri']).doNothing())
      .execute();
    return (await this.get(issuer, redirectUri)) ?? client;
  }
}
