// A stock OpenID Connect relying party: openid-client (an OpenID-certified RP library), used
// through its public API only, configured from the provider's discovery document.
//
// The functional tests run it twice per sign-in, with one JSON object on stdin each time (the
// client secret never appears on a command line), and read one JSON object from stdout:
//
//   {"step": "start", "issuer", "client_id", "client_secret", "redirect_uri", "scope"}
//     -> {"authorization_url", "state", "nonce", "code_verifier"}
//   (the test plays the browser: signs in, consents, and hands the callback URL back)
//   {"step": "finish", ...the same..., "callback_url", "state", "nonce", "code_verifier",
//    "steps": ["userinfo", "refresh", "logout"], "post_logout_redirect_uri"}
//     -> {"id_token_header", "claims", "token", "userinfo", ...one key per step}
//
// "finish" exchanges the code (PKCE verifier, state and nonce checked), validates the ID token
// (its signature against the JWKS, iss, aud, exp, iat, nonce) and then runs the named steps in
// order, each an entry of STEPS:
//   userinfo: the userinfo endpoint's claims;
//   refresh: the refresh token grant (the new ID token validated as the first was), then the old
//     refresh token once more and the new access token at userinfo, each as the server answered;
//   logout: the end-session URL (id_token_hint, post_logout_redirect_uri, a new state) the
//     browser is sent to, which the test follows.
// A failure prints {"error": {"name", "code", "message", "detail", "claim"}} and exits with status 1.

import * as client from "openid-client";

async function readInput() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

async function configure(input) {
  // Plain http: the tests' servers listen on loopback without TLS.
  const config = await client.discovery(
    new URL(input.issuer),
    input.client_id,
    input.client_secret,
    undefined,
    { execute: [client.allowInsecureRequests], timeout: 10 },
  );
  // Verify the ID token's signature against the provider's JWKS (not only its claims).
  client.enableNonRepudiationChecks(config);
  return config;
}

function header(jwt) {
  return JSON.parse(Buffer.from(jwt.split(".")[0], "base64url").toString("utf8"));
}

// What a call the server should refuse got: its error, or {"refused": false}.
async function refusal(call) {
  try {
    await call;
    return { refused: false };
  } catch (error) {
    return { refused: true, code: error.code, error: error.error, status: error.status };
  }
}

const STEPS = {
  async userinfo(config, session) {
    return client.fetchUserInfo(config, session.token.access_token, session.claims.sub);
  },
  async refresh(config, session) {
    const old = session.token;
    const fresh = await client.refreshTokenGrant(config, old.refresh_token);
    const claims = fresh.claims(); // checked as at the sign-in (nonce aside: OIDC Core 12.2)
    session.token = fresh;
    return {
      id_token_header: fresh.id_token ? header(fresh.id_token) : null,
      claims: claims ?? null,
      scope: fresh.scope,
      new_access_token: fresh.access_token !== old.access_token,
      new_refresh_token: Boolean(fresh.refresh_token) && fresh.refresh_token !== old.refresh_token,
      userinfo: await client.fetchUserInfo(config, fresh.access_token, claims.sub),
      // The rotated token again: a reuse, which should revoke the family...
      reuse: await refusal(client.refreshTokenGrant(config, old.refresh_token)),
      // ...and with it the access token just issued.
      userinfo_after_reuse: await refusal(
        client.fetchUserInfo(config, fresh.access_token, claims.sub),
      ),
    };
  },
  async logout(config, session, input) {
    const state = client.randomState();
    const url = client.buildEndSessionUrl(config, {
      id_token_hint: session.token.id_token,
      post_logout_redirect_uri: input.post_logout_redirect_uri,
      state,
    });
    return { url: url.href, state };
  },
};

async function start(input) {
  const config = await configure(input);
  const code_verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: input.redirect_uri,
    scope: input.scope,
    code_challenge: await client.calculatePKCECodeChallenge(code_verifier),
    code_challenge_method: "S256",
    state,
    nonce,
  });
  return { authorization_url: url.href, state, nonce, code_verifier };
}

async function finish(input) {
  const config = await configure(input);
  const token = await client.authorizationCodeGrant(
    config,
    new URL(input.callback_url),
    {
      pkceCodeVerifier: input.code_verifier,
      expectedState: input.state,
      expectedNonce: input.nonce,
      idTokenExpected: true,
    },
    { redirect_uri: input.redirect_uri },
  );
  const session = { token, claims: token.claims() };
  const out = {
    id_token_header: header(token.id_token),
    claims: session.claims,
    token: {
      token_type: token.token_type,
      scope: token.scope,
      expires_in: token.expiresIn(),
      has_refresh_token: token.refresh_token !== undefined,
    },
  };
  for (const name of input.steps ?? ["userinfo"]) {
    const step = STEPS[name];
    if (step === undefined) throw new Error(`unknown step: ${name}`);
    out[name] = await step(config, session, input);
  }
  return out;
}

try {
  const input = await readInput();
  const run = { start, finish }[input.step];
  if (run === undefined) throw new Error(`unknown step: ${input.step}`);
  process.stdout.write(JSON.stringify(await run(input)) + "\n");
} catch (error) {
  const { name, code, message } = error;
  // openid-client wraps the check that failed: its message, and the claim it compared.
  const detail = error.cause?.message;
  const claim = error.cause?.cause?.claim;
  process.stdout.write(JSON.stringify({ error: { name, code, message, detail, claim } }) + "\n");
  process.exitCode = 1;
}
