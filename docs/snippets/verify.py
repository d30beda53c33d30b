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
