package http

import (
	"mime"
	"net/http"
	"time"

	"github.com/julienschmidt/httprouter"
	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/http/httpwire"
	"github.com/productdata/pds/service"
	"github.com/productdata/pds/service/keys"
)

// streamIdle bounds how long a resolve stream may wait for the client, to
// read its next chunk of lines or to take the last one written; each chunk
// starts the time again, so a stream may last as long as it moves.
const streamIdle = 30 * time.Second

// ndjsonType is the media type of a resolve stream's answer.
var ndjsonType = []string{"application/x-ndjson"}

// streamTypes are the media types a resolve stream's body may be sent as.
var streamTypes = map[string]bool{"application/x-ndjson": true, "application/jsonl": true, "application/json-lines": true, "text/plain": true}

// resolveStream serves POST /v1/products/resolve/stream: a line a
// identifier in, a line an item out, as service.ResolveStream writes them.
// Until the first line is written an error is a problem answer, as the
// batch call's; after, the stream's last line says why it stopped.
func (s *Server) resolveStream(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	if ps.ByName("identifier") != "resolve" {
		s.writeError(w, r, routeNotFound(r))
		return
	}
	c, err := s.svc.Authenticate(r.Header.Get("Authorization"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	service.NoteCaller(r.Context(), c)
	if err := service.CheckScope(c, restCalls["resolve_stream"], keys.ScopeResolve); err != nil {
		s.writeError(w, r, err)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || !streamTypes[mt] {
			s.writeError(w, r, domain.Errorf(domain.CodeUnsupportedMediaType, "send the lines as application/x-ndjson (got %q)", ct))
			return
		}
	}
	rc := http.NewResponseController(w)
	_ = rc.EnableFullDuplex() // read the lines while answering them (HTTP/1.1)
	out := &streamOut{w: w, rc: rc, s: s, c: c}
	out.extend()
	sum, err := s.svc.ResolveStream(r.Context(), c, service.LineInput(r.Body), out)
	if sum.Stopped != nil {
		s.countRefusal(c, sum.Stopped)
	}
	switch {
	case err == nil:
	case r.Context().Err() != nil:
		// The client went away: there is no one to answer.
	case !out.begun:
		httpwire.SetRateLimit(w.Header(), s.svc, c)
		s.countRefusal(c, err)
		s.writeError(w, r, err)
	default:
		s.log.Info("resolve stream ended early", "request_id", requestID(r), "error", err.Error())
	}
}

// streamOut writes a resolve stream to the client.
type streamOut struct {
	w     http.ResponseWriter
	rc    *http.ResponseController
	s     *Server
	c     domain.Caller
	begun bool
}

// extend gives the connection streamIdle more to read and to write.
func (o *streamOut) extend() {
	at := time.Now().Add(streamIdle)
	_ = o.rc.SetReadDeadline(at)
	_ = o.rc.SetWriteDeadline(at)
}

func (o *streamOut) Begin(st *service.Stamp) error {
	o.begun = true
	h := o.w.Header()
	setSnapshotHeaders(h, st)
	httpwire.SetRateLimit(h, o.s.svc, o.c)
	h["Content-Type"] = ndjsonType
	o.w.WriteHeader(http.StatusOK)
	return nil
}

func (o *streamOut) Write(b []byte) (int, error) { return o.w.Write(b) }

func (o *streamOut) Flush() error {
	if err := o.rc.Flush(); err != nil {
		return err
	}
	o.extend()
	return nil
}
