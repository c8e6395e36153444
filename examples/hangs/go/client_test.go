// A client whose reply never comes on every third run (runs 3, 6, 9...,
// counted in $HANG_STATE, default .hang-count): waitForReply receives on
// a channel nobody sends to, and only the test's time limit ends it.
package hangs

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// runNumber counts this run in the state file.
func runNumber() int {
	path := os.Getenv("HANG_STATE")
	if path == "" {
		path = ".hang-count"
	}
	n := 1
	if b, err := os.ReadFile(path); err == nil {
		if k, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			n = k + 1
		}
	}
	os.WriteFile(path, []byte(strconv.Itoa(n)), 0o644)
	return n
}

var hangs = runNumber()%3 == 0

func waitForReply(replies chan string) string {
	return <-replies
}

func TestPing(t *testing.T) {
	if strings.ToUpper("ping") != "PING" {
		t.Fatal("no ping")
	}
}

func TestReply(t *testing.T) {
	replies := make(chan string, 1)
	if !hangs {
		replies <- "pong"
	}
	if got := waitForReply(replies); got != "pong" {
		t.Fatalf("reply %q", got)
	}
}

func TestAfter(t *testing.T) {}
