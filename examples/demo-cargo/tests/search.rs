// Never fails: an integration test target of its own.
#[test]
fn finds_nothing_in_an_empty_index() {
    assert_eq!(Vec::<u32>::new().iter().position(|&x| x == 1), None);
}

mod words {
    #[test]
    fn finds_a_word() {
        assert_eq!(["a", "b"].iter().position(|&w| w == "b"), Some(1));
    }
}
