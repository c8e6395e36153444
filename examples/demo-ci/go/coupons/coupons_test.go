package coupons

import (
	"reflect"
	"testing"

	shop "example.com/democi"
)

func TestCouponStacking(t *testing.T) {
	got := shop.StackCoupons([]string{"SPRING", "VIP", "SPRING"})
	if !reflect.DeepEqual(got, []string{"SPRING", "VIP"}) {
		t.Fatalf("coupons: got %v", got)
	}
}
