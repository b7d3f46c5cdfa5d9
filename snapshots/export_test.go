package snapshots

// AsFormat1 is asFormat1, for the black-box tests.
var AsFormat1 = asFormat1
