package main

// The fallback bundle gives pds the public certificate authorities (Mozilla's
// list, as the Go project ships it) where the system has none, as in the
// container image, whose scratch base holds no CA file: without it a pull
// from an HTTPS origin or S3 endpoint could not verify any certificate. It is
// used only when the system's own roots cannot be loaded. On Linux,
// SSL_CERT_FILE and SSL_CERT_DIR name the roots to trust instead (Go's
// crypto/x509 reads them), so a private certificate authority works in the
// image too.
import _ "golang.org/x/crypto/x509roots/fallback"
