"""The chapters' exercises: one module per chapter (``mean`` for chapter 03, ...) builds each exercise's
expected answer and known mistakes with lnlib; ``feedback`` says what a reader's answer gets."""
