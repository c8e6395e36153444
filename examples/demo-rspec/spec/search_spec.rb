# Never fails: a second file.
RSpec.describe "search" do
  it "finds nothing in an empty index" do
    expect([].index(1)).to be_nil
  end

  it "finds a word" do
    expect(%w[a b].index("b")).to eq(1)
  end
end
