package httpwire

import "context"

// A Gatherer is the connection a request came on, when it can hold what
// net/http writes for an answer (Gather) and send it in one system call
// (Send). The server front puts it into the request's context; a handler
// that writes a whole answer at once asks for it, and sends as usual when
// there is none. It lives here, below both, so that the handler never
// imports the front that calls it.
type Gatherer interface {
	Gather()
	Send()
}

type gathererKey struct{}

// WithGatherer returns ctx carrying g.
func WithGatherer(ctx context.Context, g Gatherer) context.Context {
	return context.WithValue(ctx, gathererKey{}, g)
}

// GathererOf returns the Gatherer in ctx, or nil.
func GathererOf(ctx context.Context) Gatherer {
	g, _ := ctx.Value(gathererKey{}).(Gatherer)
	return g
}
