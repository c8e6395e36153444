// Package shop is a small shop whose integrations misbehave now and then.
package shop

import (
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Draw is a uniform number from (seed, name, k): FNV-1a, then murmur3's
// finalizer, the same in the pytest and Jest demos.
func Draw(seed, name string, k int) float64 {
	h := uint32(0x811c9dc5)
	for _, b := range []byte(fmt.Sprintf("%s:%s:%d", seed, name, k)) {
		h = (h ^ uint32(b)) * 0x01000193
	}
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return float64(h) / 4294967296.0
}

// NetworkJitter is how late the network is for this call, 0..1.
func NetworkJitter(name string) float64 {
	seed, hasSeed := os.LookupEnv("DEMO_SEED")
	state := os.Getenv("DEMO_STATE")
	if !hasSeed || state == "" {
		return rand.New(rand.NewSource(time.Now().UnixNano())).Float64()
	}
	file := filepath.Join(state, name+".count")
	k := 0
	if b, err := os.ReadFile(file); err == nil {
		k, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	_ = os.WriteFile(file, []byte(strconv.Itoa(k+1)), 0o644)
	return Draw(seed, name, k)
}

// CartTotal adds prices in cents.
func CartTotal(cents []int) int {
	t := 0
	for _, c := range cents {
		t += c
	}
	return t
}

// Charge: the payment gateway answers in time 70% of the time.
func Charge(amount int) (string, error) {
	if NetworkJitter("payment_retry") < 0.3 {
		return "", errors.New("payment gateway did not answer in 2 s")
	}
	return "paid", nil
}

// LegacyStatus is the old API's version.
func LegacyStatus() int { return 1 }

// SyncInventory talks to a service that is down.
func SyncInventory() error {
	return errors.New("inventory service refused the connection")
}

// StackCoupons: the coupon service's cache expires too early 20% of the
// time.
func StackCoupons(codes []string) []string {
	if NetworkJitter("coupon_stacking") < 0.2 {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, c := range codes {
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}

// BuildIndex maps words to their sorted place.
func BuildIndex(words []string) map[string]int {
	time.Sleep(50 * time.Millisecond)
	s := append([]string(nil), words...)
	sort.Strings(s)
	m := map[string]int{}
	for i, w := range s {
		m[w] = i
	}
	return m
}

// Receipt formats lines of a receipt.
func Receipt(name string, cents int) string {
	time.Sleep(30 * time.Millisecond)
	return fmt.Sprintf("%-10s %8.2f", name, float64(cents)/100)
}
