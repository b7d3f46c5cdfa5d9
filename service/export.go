package service

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/kv"
	"github.com/segmentio/encoding/json"
	"golang.org/x/sync/errgroup"
)

// EachPublicProduct calls fn with every public product of the snapshot, in
// the order of their canonical subjects, as the API answers a caller
// without a tenant (Public): the stored public identity and passport views,
// the same bytes GET /v1/products/{id} and /dpp answer, so what their
// sources' licences withhold from the API (claims of a source that permits
// neither verbatim nor derived redistribution) is withheld here too, by the
// same rule, applied once at ingest. A private product has no public view
// and is left out; so is every claim and source of a tenant_upload source.
//
// It streams, a batch of products at a time: one goroutine reads the
// passport views (Pebble, zstd), another reads the identity views (the
// point index), decodes them all and calls fn, one product at a time. p
// itself is reused between calls, but nothing it refers to is, so a copy of
// *p stays valid. Its strings share the memory of the views of a batch of
// products (one kept keeps them all), and products that cite the same
// sources share their Passport.Sources, which must not be written to. It
// stops at the first error fn returns, or when ctx is done.
func (snap *Snapshot) EachPublicProduct(ctx context.Context, fn func(p *domain.PublicProduct) error) error {
	g, gctx := errgroup.WithContext(ctx)
	batches := make(chan *viewBatch, 4)
	g.Go(func() error {
		defer close(batches)
		return snap.readPublicViews(gctx, batches)
	})
	g.Go(func() error {
		var (
			p       domain.PublicProduct
			sources = map[string][]domain.Source{}
			ids     []byte
		)
		for b := range batches {
			// The identity views are read here rather than with the others, to
			// share the work: the reading goroutine is the busier one. They go
			// to memory of their own for each batch, since the products' strings
			// refer to it.
			ids = make([]byte, 0, len(ids)+len(ids)/8)
			for _, v := range b.views {
				subject := b.buf[v.subject:v.passport]
				identity, err := snap.publicIdentity(subject, &ids)
				if err != nil {
					return err
				}
				passport, coverage := b.buf[v.passport:v.coverage], b.buf[v.coverage:v.end]
				if err := decodePublicProduct(&p, identity, passport, coverage, sources); err != nil {
					return domain.Internal(fmt.Errorf("views of %s: %w", subject, err))
				}
				if err := fn(&p); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return g.Wait()
}

// viewBatch is public views of consecutive products, copied out of the
// store: each product's subject, passport body (in braces) and coverage,
// one after the other in buf.
type viewBatch struct {
	buf   []byte
	views []publicViews
}

// publicViews are the offsets in viewBatch.buf of one product's parts.
type publicViews struct{ subject, passport, coverage, end int }

// viewBatchSize is how many products a viewBatch holds.
const viewBatchSize = 256

// readPublicViews sends the public views of every public product, in
// subject order, in batches.
func (snap *Snapshot) readPublicViews(ctx context.Context, out chan<- *viewBatch) error {
	var (
		n int
		b = &viewBatch{}
	)
	send := func() error {
		select {
		case out <- b:
			// Room for about what the last batch took: its capacity, grown by
			// doubling, may be twice that, and a new buffer is cleared whole.
			b = &viewBatch{buf: make([]byte, 0, len(b.buf)+len(b.buf)/8), views: make([]publicViews, 0, viewBatchSize)}
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	err := snap.Scan(kv.TagPassport, func(key, value []byte) error {
		subject, tenant, ok := bytes.Cut(key, []byte{0})
		if !ok || len(tenant) > 0 {
			return nil // a tenant's own view of a product; the public one came first
		}
		if n++; n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		pView, err := kv.DecodeView(value)
		if err != nil {
			return domain.Internal(fmt.Errorf("passport view of %s: %w", subject, err))
		}
		v := publicViews{subject: len(b.buf)}
		b.buf = append(b.buf, subject...)
		v.passport = len(b.buf)
		b.buf = append(append(append(b.buf, '{'), pView.Body...), '}')
		v.coverage = len(b.buf)
		b.buf = append(b.buf, pView.Coverage...)
		v.end = len(b.buf)
		if b.views = append(b.views, v); len(b.views) == viewBatchSize {
			return send()
		}
		return nil
	})
	if err == nil && len(b.views) > 0 {
		err = send()
	}
	return err
}

// publicIdentity reads the public identity view of subject, appending it to
// *buf, and returns its data.
func (snap *Snapshot) publicIdentity(subject []byte, buf *[]byte) ([]byte, error) {
	start := len(*buf)
	raw, found, err := snap.View(kv.TagIdentity, string(subject), "", *buf)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, domain.Internal(errMissingView(string(subject)))
	}
	*buf = raw
	v, err := kv.DecodeView(raw[start:])
	if err != nil {
		return nil, domain.Internal(fmt.Errorf("identity view of %s: %w", subject, err))
	}
	return v.Body, nil
}

// maxSourceLists bounds the lists of sources decodePublicProduct keeps:
// generated snapshots have a few dozen, but a snapshot of many sources
// could cite a different list in every product.
const maxSourceLists = 4096

// decodePublicProduct fills p from an identity view's data, a passport
// view's body (in braces) and its coverage. The passport's claims, most of
// its bytes, are jumped over (claimsEnd) and its warnings stepped over,
// neither decoded, and each list of sources is decoded once: sources maps
// the JSON of a passport's sources, as views hold it, to the sources (which
// the products that cite the same ones share).
func decodePublicProduct(p *domain.PublicProduct, identity, passport, coverage []byte, sources map[string][]domain.Source) error {
	*p = domain.PublicProduct{}
	if err := decodeIdentity(identity, &p.Identity); err != nil {
		return fmt.Errorf("identity: %w", err)
	}
	var data []byte
	pp := &p.Passport
	member := func(key, value []byte) error {
		switch string(key) {
		case "status":
			if s, err := plainString(value); err == nil {
				pp.Status = s
				return nil
			}
			return unmarshalView(value, &pp.Status)
		case "reason":
			if s, err := plainString(value); err == nil {
				pp.Reason = s
				return nil
			}
			return unmarshalView(value, &pp.Reason)
		case "data":
			data = value
		case "sources":
			if srcs, ok := sources[string(value)]; ok {
				pp.Sources = srcs
				return nil
			}
			err := eachElement(value, func(elem []byte) error {
				var src domain.Source
				if err := json.Unmarshal(elem, &src); err != nil {
					return err
				}
				pp.Sources = append(pp.Sources, src)
				return nil
			})
			if err == nil && len(sources) < maxSourceLists {
				pp.Sources = slices.Clip(pp.Sources) // shared: an append must not write into it
				sources[string(value)] = pp.Sources
			}
			return err
		case "validation":
			v, err := decodeValidation(value)
			pp.Validation = v
			return err
		}
		return nil
	}
	jumped, err := walkMembers(passport, true, member)
	if err != nil && jumped { // perhaps the sources' name was in a claim: step over the claims after all
		*pp, data = domain.PassportAnswer{}, nil
		err = eachMember(passport, member)
	}
	if err != nil {
		return fmt.Errorf("passport: %w", err)
	}
	if pp.Status == domain.StatusFound {
		pp.Data = new(domain.PassportData)
		if err := decodePassportData(data, pp.Data); err != nil {
			return fmt.Errorf("passport data: %w", err)
		}
	}
	if len(coverage) > 0 {
		if err := decodeCoverage(coverage, &pp.Coverage); err != nil {
			return fmt.Errorf("coverage: %w", err)
		}
	}
	return nil
}

// unmarshalView decodes the JSON value b, part of a viewBatch, into v. Its
// strings and raw values refer to b rather than to copies, which would each
// be an allocation: a batch's buffer is never written again.
func unmarshalView(b []byte, v any) error {
	rest, err := json.Parse(b, v, json.ZeroCopy)
	if err == nil && len(rest) > 0 {
		return errStoredJSON
	}
	return err
}

// sourcesAfterClaims is what ingest writes between a passport's claims and
// its sources (appendFoundTail).
var sourcesAfterClaims = []byte(`],"sources":`)

// claimsEnd returns where the claims of the passport body obj, an array
// from obj[i], end, to save stepping over them: they are most of its bytes,
// and every member read after them (sources, validation, warnings) is
// short. That is after the ']' of the first sources member name that
// follows a ']', or -1 if there is none. Such a name inside a claim would
// be found instead; walkMembers notices.
func claimsEnd(obj []byte, i int) int {
	k := bytes.Index(obj[i:], sourcesAfterClaims)
	if k < 0 {
		return -1
	}
	return i + k + 1
}

// eachMember calls fn with the key and the value (as written) of each member
// of the JSON object obj, a stored view that ingest wrote (so valid JSON with
// keys free of escapes). Values are stepped over by their brackets and
// quotes, not parsed.
func eachMember(obj []byte, fn func(key, value []byte) error) error {
	_, err := walkMembers(obj, false, fn)
	return err
}

// walkMembers is eachMember, but with jump it takes the value of a member
// named claims to end at claimsEnd, not stepping over it, and says so
// (jumped). The members after it must then run to the end of obj; should
// they not, claimsEnd was inside a claim, and it returns errClaimsEnd.
// After any error once jumped, fn has perhaps been called with what were
// not members: start afresh with eachMember.
func walkMembers(obj []byte, jump bool, fn func(key, value []byte) error) (jumped bool, err error) {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return jumped, errStoredJSON
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return false, nil
	}
	for i < len(obj) {
		if obj[i] != '"' {
			return jumped, errStoredJSON
		}
		end, err := skipString(obj, i)
		if err != nil {
			return jumped, err
		}
		key := obj[i+1 : end-1]
		i = skipSpace(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return jumped, errStoredJSON
		}
		i = skipSpace(obj, i+1)
		end = -1
		if jump && !jumped && string(key) == "claims" && i < len(obj) && obj[i] == '[' {
			end = claimsEnd(obj, i)
			jumped = end >= 0
		}
		if end < 0 {
			if end, err = skipValue(obj, i); err != nil {
				return jumped, err
			}
		}
		if err := fn(key, obj[i:end]); err != nil {
			return jumped, err
		}
		i = skipSpace(obj, end)
		if i < len(obj) && obj[i] == '}' {
			if jumped && skipSpace(obj, i+1) != len(obj) {
				return jumped, errClaimsEnd
			}
			return jumped, nil
		}
		if i >= len(obj) || obj[i] != ',' {
			return jumped, errStoredJSON
		}
		i = skipSpace(obj, i+1)
	}
	return jumped, errStoredJSON
}

// eachElement calls fn with each element (as written) of the JSON array arr,
// as eachMember does with an object's members.
func eachElement(arr []byte, fn func(elem []byte) error) error {
	i := skipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return errStoredJSON
	}
	i = skipSpace(arr, i+1)
	if i < len(arr) && arr[i] == ']' {
		return nil
	}
	for i < len(arr) {
		end, err := skipValue(arr, i)
		if err != nil {
			return err
		}
		if err := fn(arr[i:end]); err != nil {
			return err
		}
		i = skipSpace(arr, end)
		if i < len(arr) && arr[i] == ']' {
			return nil
		}
		if i >= len(arr) || arr[i] != ',' {
			return errStoredJSON
		}
		i = skipSpace(arr, i+1)
	}
	return errStoredJSON
}

// skipValue returns the index just past the JSON value at b[i].
func skipValue(b []byte, i int) (int, error) {
	depth := 0
	for i < len(b) {
		switch b[i] {
		case '"':
			end, err := skipString(b, i)
			if err != nil || depth == 0 {
				return end, err
			}
			i = end
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1, nil
			}
			if depth < 0 {
				return 0, errStoredJSON
			}
		default:
			if depth == 0 { // a number, true, false or null
				for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\n' {
					i++
				}
				return i, nil
			}
		}
		i++
	}
	return 0, errStoredJSON
}

// skipString returns the index just past the JSON string at b[i] (a quote).
func skipString(b []byte, i int) (int, error) {
	i++
	for {
		k := bytes.IndexByte(b[i:], '"')
		if k < 0 {
			return 0, errStoredJSON
		}
		i += k
		escapes := 0
		for j := i - 1; b[j] == '\\'; j-- {
			escapes++
		}
		i++
		if escapes%2 == 0 {
			return i, nil
		}
	}
}
