package gs1

import "testing"

// Benchmarks of the hot paths, in-process. Run per core with
//
//	go test -run '^$' -bench . -benchmem -cpu 1 ./gs1/
//
// Figures are recorded in BENCHMARKS.md; no test asserts a timing.

var (
	sinkBool   bool
	sinkReport Report
	sinkLink   *Link
)

func perSecond(b *testing.B) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

func BenchmarkValidGTIN(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_, sinkBool = ValidGTIN("09520123456788")
	}
	perSecond(b)
}

func BenchmarkValidGTIN13(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_, sinkBool = ValidGTIN("4006381333931")
	}
	perSecond(b)
}

func BenchmarkValidateGTIN(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkReport, _ = Validate(NSGTIN, "04006381333931")
	}
	perSecond(b)
}

func BenchmarkValidateAutoAmbiguous(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkReport, _ = Validate(NSAuto, "4006381333931")
	}
	perSecond(b)
}

func BenchmarkParseDigitalLink(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkLink, _ = ParseDigitalLink("https://id.gs1.org/01/09520123456788")
	}
	perSecond(b)
}

func BenchmarkParseDigitalLinkFull(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkLink, _ = ParseDigitalLink("https://example.com/dl/01/09520123456788/10/ABC%2F123/21/S1?17=261231&3103=000195&linkType=gs1:pip")
	}
	perSecond(b)
}

func BenchmarkParseDigitalLinkInvalid(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkLink, _ = ParseDigitalLink("https://id.gs1.org/01/09520123456789/10/ABC")
	}
	perSecond(b)
}

var sinkES *ElementString

// Element strings: a bracketed GTIN, expiry and lot; the same as a
// GS1 DataMatrix scan; and a scan with an error.
func BenchmarkParseElementString(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkES, _ = ParseElementString("(01)09520123456788(17)261231(10)AB12")
	}
	perSecond(b)
}

func BenchmarkParseElementStringScan(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkES, _ = ParseElementString("]d2010952012345678817261231" + "10AB12\x1d21S1")
	}
	perSecond(b)
}

func BenchmarkParseElementStringInvalid(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkES, _ = ParseElementString("(01)09520123456789(10)AB12")
	}
	perSecond(b)
}
