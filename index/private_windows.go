package index

import "os"

// privateCopy makes no copy on Windows, which refuses to cut a file that is
// mapped: Bleve maps the segment's file itself.
func privateCopy(src *os.File, dir string) (*os.File, string, error) { return nil, "", nil }
