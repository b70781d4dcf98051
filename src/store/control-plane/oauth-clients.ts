/**
 * The gateway's client registrations at upstreams' authorization servers (docs/oauth.md, "Connecting
 * upstreams"): one per issuer and redirect URI, made by dynamic registration the first time a user
 * connects an upstream that issuer protects, and reused after; and copies of clients configured on an
 * upstream (saveConfigured). The client secret is sealed.
 */
import type { Kysely } from 'kysely';
import type { Cipher } from '../cipher';
import { newId } from './context';
import type { Database, UpstreamOAuthClientsTable } from '../schema';

export interface StoredClient {
  clientId: string;
  clientSecret?: string;
}

/** A kept registration: its row id (what authorizations refer to) and the issuer it is at. */
export interface KeptClient extends StoredClient {
  id: string;
  issuer: string;
}

const aad = (id: string) => `upstream-oauth-client:${id}`;

export class OAuthClientStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly cipher: Cipher,
  ) {}

  async get(issuer: string, redirectUri: string): Promise<KeptClient | undefined> {
    const row = await this.db
      .selectFrom('upstream_oauth_clients')
      .selectAll()
      .where('issuer', '=', issuer)
      .where('redirect_uri', '=', redirectUri)
      .executeTakeFirst();
    return row && this.kept(row);
  }

  async byId(id: string): Promise<KeptClient | undefined> {
    const row = await this.db
      .selectFrom('upstream_oauth_clients')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    return row && this.kept(row);
  }

  private kept(row: UpstreamOAuthClientsTable): KeptClient {
    return {
      id: row.id,
      issuer: row.issuer,
      clientId: row.client_id,
      ...(row.client_secret !== null && {
        clientSecret: this.cipher.open(row.client_secret, aad(row.id)).toString('utf8'),
      }),
    };
  }

  /**
   * Keeps a copy of the client an upstream's configuration names (`auth.oauth.clientId`), for the
   * issuer its resource metadata named, so renewals and revocations find it like a registered one. One
   * row per upstream (keyed `configured:<upstream id>` instead of a redirect URI), rewritten on every
   * connect, so a changed id or secret is used from the next connection on.
   */
  async saveConfigured(upstreamId: string, issuer: string, client: StoredClient): Promise<KeptClient> {
    const id = `oclc_${upstreamId}`;
    const values = {
      issuer,
      client_id: client.clientId,
      client_secret:
        client.clientSecret === undefined
          ? null
          : this.cipher.seal(Buffer.from(client.clientSecret), aad(id)),
    };
    await this.db
      .insertInto('upstream_oauth_clients')
      .values({
        id,
        redirect_uri: `configured:${upstreamId}`,
        created_at: new Date().toISOString(),
        ...values,
      })
      .onConflict((oc) => oc.column('id').doUpdateSet(values))
      .execute();
    return { id, issuer, ...client };
  }

  /** Keeps a registration; when another replica registered at the same time, its registration wins. */
  async save(issuer: string, redirectUri: string, client: StoredClient): Promise<KeptClient> {
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
    const kept = await this.get(issuer, redirectUri);
    if (!kept) throw new Error('The client registration was not kept');
    return kept;
  }
}
