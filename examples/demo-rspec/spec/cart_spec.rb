# A demo with known outcomes: "retries the payment" fails on every other
# run, "talks to the legacy API" always, the rest never.
require "cart"

RSpec.describe Cart do
  it "adds items" do
    expect(Cart.total([1, 2])).to eq(3)
  end

  describe "checkout" do
    it "retries the payment" do
      run = next_run
      expect(run % 2).to eq(0), "payment gateway timed out (run #{run})"
    end

    it "talks to the legacy API" do
      expect(Cart.total([1])).to eq(2)
    end

    it "refunds" do
      pending "refunds are not written yet"
      expect(Cart.total([])).to eq(1)
    end

    xit "ships abroad" do
    end
  end

  [1, 2].each do |n|
    it "counts #{n} item" do
      expect(Cart.total([n])).to eq(n)
    end
  end
end
