package ingest

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/index"
	"github.com/productdata/pds/ingest/records"
	"github.com/productdata/pds/ingest/scratch"
	"github.com/productdata/pds/kv"
	"github.com/productdata/pds/snapshots"
)

type builder struct {
	opts    Options
	inputs  inputSet
	scratch *scratch.Store
	out     *kv.Builder
	cat     catalog
	parties map[string]*domain.Party
	// partyLine and sourceLine give the line of each accepted party and
	// source, for the message of a duplicate.
	partyLine, sourceLine map[string]int
	digest                digest
	summary               Summary
	printed               map[string]int
	printedReplaced       map[string]int
	current               atomic.Value // string: the stage (the file being read, "views", …)
	count                 atomic.Int64 // lines read in the current phase
	stageMu               sync.Mutex   // guards stageAt and summary.Stages
	stageAt               time.Time    // when the current stage started
	// storeSums are the checksums of the store's files, taken while the
	// search index merged (nil if they could not be).
	storeSums     map[string]snapshots.File
	buf, key, rec []byte
	// lastUse is the tagDocUse key written last: the evidence of one
	// product and document usually comes together, and is written once.
	lastUse []byte
	// docSample is every docSampleEvery-th document id, for cutting the
	// document join into parts (joinSplits).
	docSample []string
	index     *index.Builder
	// sample is the products whose views make the store's compression
	// dictionaries.
	sample *subjectSample
	// seen holds every scratch key written for an id check (identifiers,
	// claim, document and evidence ids): a key it has not seen is surely
	// new, so the scratch store is asked only about the rare maybes.
	seen *idFilter
	// kept is the records the build keeps (KeepRecords, Base), written in
	// keptTemp until the snapshot is in place.
	kept     *records.Store
	keptTemp *snapshots.Temp
	// up is the state of an incremental build (nil for a full one).
	up *update
	// layered is set when the incremental build's store is its base's with
	// a layer of the night's changes (kv.NewLayer), not written whole;
	// layers is then how many layers the new store holds.
	layered bool
	layers  int
	// indexReport is what the search index's update did (index.Builder.Report).
	indexReport string
}

// seenBytes sizes the id filter: 32 MiB, whatever the input. It answers
// "maybe" for about 0.5% of new ids at 22 million ids (1M generated
// products; TestIDFilter), and stays useful well past that. A variable only
// so that a test can make every answer a maybe (SetIDFilterBytes).
var seenBytes = 32 << 20

// maybeSeen reports whether key may have been written for an id check;
// false is certain.
func (b *builder) maybeSeen(key []byte) bool { return b.seen.test(key) }

// markSeen adds key to the id filter, and reports whether it may have been
// there before (as maybeSeen would have): one hashing of the key instead of
// two. Adding the key of a line that turns out a duplicate changes nothing,
// since the key is in the store already.
func (b *builder) markSeen(key []byte) bool { return b.seen.testAndAdd(key) }
