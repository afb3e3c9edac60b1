// A real OpenID Connect provider for Board's single sign-on tests (tests/sign_in/), on loopback.
//
// One client (Board, at each of BOARD_URLS), the accounts of ACCOUNTS_FILE (read at each sign-in,
// so a test changes a person's groups between two sign-ins), devInteractions for the login and
// consent screens (any password), and RP-initiated logout. Prints "listening <issuer>" once it
// accepts connections.
import fs from 'node:fs';
import Provider from 'oidc-provider';

const port = Number(process.env.PORT);
const boards = process.env.BOARD_URLS.split(',');
const accountsFile = process.env.ACCOUNTS_FILE;
const issuer = `http://127.0.0.1:${port}`;

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: 'board',
      client_secret: process.env.CLIENT_SECRET,
      redirect_uris: boards.map((board) => `${board}/oidc/callback/`),
      post_logout_redirect_uris: boards.map((board) => `${board}/accounts/login/`),
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
    },
  ],
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'groups'] },
  async findAccount(ctx, id) {
    const accounts = JSON.parse(fs.readFileSync(accountsFile, 'utf8'));
    if (!accounts[id]) return undefined;
    return { accountId: id, claims: async () => ({ sub: id, ...accounts[id] }) };
  },
  features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
  cookies: { keys: ['board-tests-only'] },
});

provider.listen(port, '127.0.0.1', () => console.log(`listening ${issuer}`));
