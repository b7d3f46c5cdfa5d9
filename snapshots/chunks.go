package snapshots

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"

	"github.com/zeebo/blake3"
)

// A format 3 snapshot lists, besides each file's BLAKE3, the BLAKE3 of
// every ChunkSize bytes of it, in the file ChunksName (itself listed and
// checksummed in the manifest, so the signature covers it). pds serve
// then checks each chunk of a file the first time it reads from it,
// instead of hashing every file before it serves: a start reads only what
// it needs (see docs/snapshots.md).
//
// The file: the 8 bytes "PDSCHNK1", the chunk size and the number of
// files as little-endian uint32s, then, for each file the manifest lists
// in its order (the chunks file left out), the chunk hashes of that file,
// ceil(size/chunk size) of them, each the first chunkHashSize bytes of the
// chunk's BLAKE3.
const (
	// ChunkSize is the unit a format 3 snapshot's files are checked in as
	// they are read: a point read touches one or two chunks, and a cold
	// read of one chunk costs a 64 KiB read and about 30 µs of hashing.
	ChunkSize      = 64 << 10
	chunkHashSize  = 16
	chunksMagic    = "PDSCHNK1"
	chunksHeadSize = len(chunksMagic) + 8
)

// sumFile reads the file rel (slash-separated) under dir once, returning
// its listing: size, BLAKE3 and chunk hashes.
func sumFile(dir, rel string) (File, error) {
	f, err := os.Open(join(dir, rel))
	if err != nil {
		return File{Path: rel}, err
	}
	defer f.Close()
	whole := blake3.New()
	var chunks []byte
	buf := make([]byte, ChunkSize)
	var size int64
	for {
		n, err := io.ReadFull(f, buf)
		if n > 0 {
			whole.Write(buf[:n])
			sum := blake3.Sum256(buf[:n])
			chunks = append(chunks, sum[:chunkHashSize]...)
			size += int64(n)
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return File{Path: rel}, err
		}
	}
	return File{Path: rel, Size: size, BLAKE3: prefixBLAKE3 + fmt.Sprintf("%x", whole.Sum(nil)), chunks: chunks}, nil
}

// chunkCount is how many chunks a file of size bytes has.
func chunkCount(size int64) int64 { return (size + ChunkSize - 1) / ChunkSize }

// encodeChunks writes the chunks file's bytes for files (in manifest order,
// the chunks file not among them).
func encodeChunks(files []File) []byte {
	out := make([]byte, chunksHeadSize, chunksHeadSize+len(files)*chunkHashSize)
	copy(out, chunksMagic)
	binary.LittleEndian.PutUint32(out[8:], ChunkSize)
	binary.LittleEndian.PutUint32(out[12:], uint32(len(files)))
	for _, f := range files {
		out = append(out, f.chunks...)
	}
	return out
}

// decodeChunks reads the chunks file b of a manifest that lists files
// (the chunks file among them) and hands each other file its hashes.
func decodeChunks(b []byte, files []File) (map[string][]byte, error) {
	if len(b) < chunksHeadSize || !bytes.Equal(b[:8], []byte(chunksMagic)) {
		return nil, fmt.Errorf("%s does not start with its header", ChunksName)
	}
	if cs := binary.LittleEndian.Uint32(b[8:]); cs != ChunkSize {
		return nil, fmt.Errorf("%s has chunks of %d bytes; this pds reads %d", ChunksName, cs, ChunkSize)
	}
	n := int(binary.LittleEndian.Uint32(b[12:]))
	if n != len(files)-1 {
		return nil, fmt.Errorf("%s covers %d files; the manifest lists %d besides it", ChunksName, n, len(files)-1)
	}
	out := make(map[string][]byte, n)
	rest := b[chunksHeadSize:]
	for _, f := range files {
		if f.Path == ChunksName {
			continue
		}
		need := chunkCount(f.Size) * chunkHashSize
		if int64(len(rest)) < need {
			return nil, fmt.Errorf("%s ends before the hashes of %s", ChunksName, f.Path)
		}
		out[f.Path], rest = rest[:need:need], rest[need:]
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%s has %d bytes after the last file's hashes", ChunksName, len(rest))
	}
	return out, nil
}

// chunkMatches reports whether b, chunk i of a file, has the hash listed.
func chunkMatches(hashes []byte, i int64, b []byte) bool {
	sum := blake3.Sum256(b)
	want := hashes[i*chunkHashSize : (i+1)*chunkHashSize]
	return bytes.Equal(sum[:chunkHashSize], want)
}
