# SPDX-License-Identifier: BSD-3-Clause
"""A test certificate authority, made at test time: ECDSA and RSA server
certificates signed by it (any names, any dates), their keys written as
ewykd wants them (PEM, mode 600), and OCSP responses for them. Nothing is
kept between runs."""
import datetime
import os

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509 import ocsp
from cryptography.x509.oid import NameOID

APP_NAMES = ("ewyk.test", "localhost")
APP_IP = "198.18.0.2"


def _now():
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


def _key(kind):
    if kind == "rsa":
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return ec.generate_private_key(ec.SECP256R1())


def _write_key(path, key, mode=0o600):
    data = key.private_bytes(serialization.Encoding.PEM,
                             serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(path, mode)


class CA:
    """A certificate authority in directory d: ca.pem (the trust anchor
    the clients are given)."""

    def __init__(self, d):
        self.dir = str(d)
        self.key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "ewyk test CA")])
        now = _now()
        self.cert = (x509.CertificateBuilder()
                     .subject_name(name).issuer_name(name)
                     .public_key(self.key.public_key())
                     .serial_number(x509.random_serial_number())
                     .not_valid_before(now - datetime.timedelta(days=1))
                     .not_valid_after(now + datetime.timedelta(days=3650))
                     .add_extension(x509.BasicConstraints(ca=True, path_length=None),
                                    critical=True)
                     .sign(self.key, hashes.SHA256()))
        self.path = os.path.join(self.dir, "ca.pem")
        with open(self.path, "wb") as f:
            f.write(self.cert.public_bytes(serialization.Encoding.PEM))

    def issue(self, stem, names=APP_NAMES, kind="ec", days=30, not_before_days=-1,
              ip=APP_IP):
        """stem.pem (the certificate, then the CA's) and stem.key; returns
        (cert path, key path, the certificate)."""
        key = _key(kind)
        now = _now()
        sans = [x509.DNSName(n) for n in names]
        if ip:
            import ipaddress
            sans.append(x509.IPAddress(ipaddress.ip_address(ip)))
        cert = (x509.CertificateBuilder()
                .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME,
                                                            names[0])]))
                .issuer_name(self.cert.subject)
                .public_key(key.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(now + datetime.timedelta(days=not_before_days))
                .not_valid_after(now + datetime.timedelta(days=days))
                .add_extension(x509.SubjectAlternativeName(sans), critical=False)
                .add_extension(x509.BasicConstraints(ca=False, path_length=None),
                               critical=True)
                .sign(self.key, hashes.SHA256()))
        cert_path = os.path.join(self.dir, stem + ".pem")
        key_path = os.path.join(self.dir, stem + ".key")
        with open(cert_path, "wb") as f:
            f.write(cert.public_bytes(serialization.Encoding.PEM))
            f.write(self.cert.public_bytes(serialization.Encoding.PEM))
        _write_key(key_path, key)
        return cert_path, key_path, cert

    def ocsp_response(self, cert, path):
        """A 'good' OCSP response for cert, signed by the CA, in DER."""
        now = _now()
        resp = (ocsp.OCSPResponseBuilder()
                .add_response(cert=cert, issuer=self.cert, algorithm=hashes.SHA1(),
                              cert_status=ocsp.OCSPCertStatus.GOOD,
                              this_update=now - datetime.timedelta(minutes=5),
                              next_update=now + datetime.timedelta(days=7),
                              revocation_time=None, revocation_reason=None)
                .responder_id(ocsp.OCSPResponderEncoding.HASH, self.cert)
                .sign(self.key, hashes.SHA256()))
        with open(path, "wb") as f:
            f.write(resp.public_bytes(serialization.Encoding.DER))
        return path


def write_key(path, kind="ec", mode=0o600):
    """A lone key (one that matches no certificate)."""
    _write_key(path, _key(kind), mode)
    return path
