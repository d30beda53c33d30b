const crypto = require("node:crypto");

// verify throws unless header (X-PC-Signature) signs body, the raw request body as a Buffer.
// Express: app.post("/hooks", express.raw({ type: "application/json" }), (req, res) => {
//   verify(process.env.WEBHOOK_SECRET, req.get("X-PC-Signature") ?? "", req.body); ... });
function verify(secret, header, body, now = Date.now() / 1000) {
  const pairs = header.split(",").map((p) => p.trim().split("="));
  const t = pairs.find(([k]) => k === "t")?.[1] ?? "";
  const sigs = pairs.filter(([k]) => k === "v1").map(([, v]) => Buffer.from(v ?? ""));
  if (!/^\d+$/.test(t) || sigs.length === 0) throw new Error("malformed X-PC-Signature");
  if (Math.abs(now - Number(t)) > 300) throw new Error("timestamp outside the 300 s tolerance");
  const hmac = crypto.createHmac("sha256", secret).update(`${t}.`).update(body);
  const expected = Buffer.from(hmac.digest("hex"));
  if (!sigs.some((s) => s.length === expected.length && crypto.timingSafeEqual(s, expected))) {
    throw new Error("signature mismatch");
  }
}

// verifyStandard throws unless the Standard Webhooks headers (webhook-id, webhook-timestamp,
// webhook-signature) sign body, the raw request body as a Buffer. Express: verifyStandard(
//   process.env.WEBHOOK_SECRET, req.get("webhook-id") ?? "", req.get("webhook-timestamp") ?? "",
//   req.get("webhook-signature") ?? "", req.body);
function verifyStandard(secret, id, timestamp, signature, body, now = Date.now() / 1000) {
  const sigs = signature.split(" ").filter((s) => s.startsWith("v1,")).map((s) => Buffer.from(s.slice(3)));
  if (!id || !/^\d+$/.test(timestamp) || sigs.length === 0) throw new Error("malformed webhook-signature");
  if (Math.abs(now - Number(timestamp)) > 300) throw new Error("timestamp outside the 300 s tolerance");
  // The key is what the base64 after whsec_ decodes to; Node's base64 decoder reads both the
  // standard padded form of secrets made now and the unpadded base64url of older ones.
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const hmac = crypto.createHmac("sha256", key).update(`${id}.${timestamp}.`).update(body);
  const expected = Buffer.from(hmac.digest("base64"));
  if (!sigs.some((s) => s.length === expected.length && crypto.timingSafeEqual(s, expected))) {
    throw new Error("signature mismatch");
  }
}

module.exports = { verify, verifyStandard };
