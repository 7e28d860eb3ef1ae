// The demo's JSON API called through kiln's generated TypeScript client (`Document::typescript`),
// from Node, against the running demo at $KILN_API. `scripts/api-judges` writes the client next
// to this file as `client.ts`, compiles both with `tsc --strict`, and runs this with `node --test`.
import assert from "node:assert/strict";
import { test } from "node:test";

import { apiComments, apiPage, apiPages, apiPostComment, apiSearch, apiToken, type Client } from "./client.js";

const baseUrl = process.env.KILN_API;
if (baseUrl === undefined) throw new Error("KILN_API names the running demo");
const anonymous: Client = { baseUrl };
// Only the editor gets a token: the script passes the password the demo printed at start.
const password = process.env.KILN_EDITOR_PASSWORD;
if (password === undefined) throw new Error("KILN_EDITOR_PASSWORD is the running demo's editor password");

test("the pages are listed, read and searched", async () => {
  const list = await apiPages(anonymous);
  assert.ok(list.ok && list.status === 200);
  const slugs = list.data.pages.map((page) => page.slug);
  assert.ok(slugs.includes("tour"), slugs.join());

  const page = await apiPage(anonymous, { slug: "tour" });
  assert.ok(page.ok);
  assert.equal(page.data.slug, "tour");
  assert.ok(page.data.markdown.length > 0);

  const missing = await apiPage(anonymous, { slug: "no-such-page" });
  assert.equal(missing.ok, false);
  assert.equal(missing.status, 404);
  // A refusal's body is typed too: the problem details (RFC 9457) the API answers with.
  if (!missing.ok) assert.equal(missing.error.status, 404);

  const found = await apiSearch(anonymous, { q: "tour" });
  assert.ok(found.ok && found.data.some((p) => p.slug === "tour"));
});

test("a comment is refused without a token and posted with one", async () => {
  const refused = await apiPostComment(anonymous, { slug: "tour" }, { body: "no token" });
  assert.equal(refused.status, 401);

  const token = await apiToken(anonymous, { author: "Node", password });
  assert.ok(token.ok, "a token");
  const client: Client = { baseUrl, bearer: token.data.token };
  const posted = await apiPostComment(client, { slug: "tour" }, { body: "Posted from TypeScript." });
  assert.ok(posted.ok, `posted: ${posted.status}`);
  assert.equal(posted.data.author, "Node");

  const comments = await apiComments(anonymous, { slug: "tour" });
  assert.ok(comments.ok);
  assert.deepEqual(comments.data.at(-1), posted.data);

  const empty = await apiPostComment(client, { slug: "tour" }, { body: "" });
  assert.equal(empty.status, 422);
});
