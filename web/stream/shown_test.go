package stream

import (
	"errors"
	"testing"
)

// batches records what reaches the connection.
type batches struct{ got [][]byte }

func (b *batches) writeBatch(bs [][]byte) error {
	b.got = append(b.got, bs...)
	return nil
}

// A viewer's Shown is told each batch as the live view sent it, before
// the viewer's personalisation and before it is written; its error
// withholds the batch.
func TestShownSeesEachBatchAndCanWithholdIt(t *testing.T) {
	t.Parallel()
	conn := &batches{}
	var told [][]byte
	fail := false
	out := outFor(conn, Viewer{
		Personalize: func(b []byte) []byte { return append([]byte("mine:"), b...) },
		Shown: func(bs [][]byte) error {
			if fail {
				return errors.New("no record")
			}
			told = append(told, bs...)
			return nil
		},
	})
	if err := out.writeBatch([][]byte{[]byte("a"), []byte("b")}); err != nil {
		t.Fatal(err)
	}
	if len(told) != 2 || string(told[0]) != "a" || len(conn.got) != 2 || string(conn.got[1]) != "mine:b" {
		t.Fatalf("told %q, written %q", told, conn.got)
	}
	fail = true
	if err := out.writeBatch([][]byte{[]byte("c")}); err == nil {
		t.Fatal("a failed Shown let the batch through")
	}
	if len(conn.got) != 2 {
		t.Errorf("written %q after a failed Shown", conn.got)
	}
}
