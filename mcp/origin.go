package mcp

import (
	"net"
	"net/url"
	"strings"
)

// originList is the set of browser origins the endpoint accepts besides
// loopback ones (DNS rebinding protection).
type originList map[string]bool

func newOriginList(allowed []string) originList {
	l := originList{}
	for _, o := range allowed {
		if n, ok := normalizeOrigin(o); ok {
			l[n] = true
		}
	}
	return l
}

// allowed reports whether a request with this Origin header may be served:
// an http or https origin on localhost, 127.0.0.0/8 or [::1] (any port), or
// one of the configured origins. "null" and anything unparsable are refused.
func (l originList) allowed(origin string) bool {
	n, ok := normalizeOrigin(origin)
	if !ok {
		return false
	}
	u, _ := url.Parse(n)
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return true
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return true
	}
	return l[n]
}

// normalizeOrigin returns scheme://host[:port] in lower case, or false when s
// is not an http(s) origin.
func normalizeOrigin(s string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return "", false
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.Fragment != "" {
		return "", false
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), true
}
