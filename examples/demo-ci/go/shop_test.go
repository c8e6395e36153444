package shop

import (
	"strings"
	"testing"
)

func TestCartTotal(t *testing.T) {
	if CartTotal([]int{110, 220}) != 330 {
		t.Fatal("wrong total")
	}
}

func TestCheckoutFlow(t *testing.T) {
	if CartTotal(nil) != 0 {
		t.Fatal("an empty cart costs something")
	}
}

func TestSearchIndex(t *testing.T) {
	if BuildIndex([]string{"b", "a"})["a"] != 0 {
		t.Fatal("a is not first")
	}
}

func TestReceiptFormat(t *testing.T) {
	if !strings.HasPrefix(Receipt("tea", 250), "tea") {
		t.Fatal("bad receipt")
	}
}

func TestPaymentRetry(t *testing.T) {
	if _, err := Charge(12); err != nil {
		t.Fatal(err)
	}
}

func TestLegacyApi(t *testing.T) {
	if LegacyStatus() != 2 {
		t.Fatalf("legacy status: got %d, want 2", LegacyStatus())
	}
}

func TestInventorySync(t *testing.T) {
	if err := SyncInventory(); err != nil {
		t.Fatal(err)
	}
}
