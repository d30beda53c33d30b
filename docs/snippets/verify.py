import base64
import hashlib
import hmac
import time


def verify(secret: str, header: str, body: bytes, now=None) -> None:
    """Raise ValueError unless header (X-PC-Signature) signs body, the raw request body.

    Flask: verify(os.environ["WEBHOOK_SECRET"], request.headers.get("X-PC-Signature", ""),
    request.get_data())
    """
    pairs = [p.strip().partition("=") for p in header.split(",")]
    t = next((v for k, _, v in pairs if k == "t"), "")
    sigs = [v.encode() for k, _, v in pairs if k == "v1"]
    if not (t.isascii() and t.isdigit()) or not sigs:
        raise ValueError("malformed X-PC-Signature")
    if abs((time.time() if now is None else now) - int(t)) > 300:
        raise ValueError("timestamp outside the 300 s tolerance")
    mac = hmac.new(secret.encode(), t.encode() + b"." + body, hashlib.sha256)
    expected = mac.hexdigest().encode()
    if not any(hmac.compare_digest(expected, s) for s in sigs):
        raise ValueError("signature mismatch")


def verify_standard(secret: str, msg_id: str, timestamp: str, signature: str, body: bytes, now=None) -> None:
    """Raise ValueError unless the Standard Webhooks headers sign body, the raw request body.

    Flask: h = request.headers; verify_standard(os.environ["WEBHOOK_SECRET"], h.get("webhook-id", ""),
    h.get("webhook-timestamp", ""), h.get("webhook-signature", ""), request.get_data())
    """
    sigs = [s[3:].encode() for s in signature.split(" ") if s.startswith("v1,")]
    if not msg_id or not (timestamp.isascii() and timestamp.isdigit()) or not sigs:
        raise ValueError("malformed webhook-signature")
    if abs((time.time() if now is None else now) - int(timestamp)) > 300:
        raise ValueError("timestamp outside the 300 s tolerance")
    # The key is what the base64 after whsec_ decodes to: standard padded base64 in secrets made
    # now, unpadded base64url in older ones; this decodes both.
    b64 = (secret[len("whsec_"):] if secret.startswith("whsec_") else secret).rstrip("=")
    key = base64.urlsafe_b64decode(b64.replace("+", "-").replace("/", "_") + "=" * (-len(b64) % 4))
    mac = hmac.new(key, msg_id.encode() + b"." + timestamp.encode() + b"." + body, hashlib.sha256)
    expected = base64.b64encode(mac.digest())
    if not any(hmac.compare_digest(expected, s) for s in sigs):
        raise ValueError("signature mismatch")
