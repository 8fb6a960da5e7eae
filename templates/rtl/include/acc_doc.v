// The column result of the array (psum_i, with the input row's and the weight column's
// block scales and the layer's precision) is converted to the accumulator's domain and
// registered; one cycle later it is written, or added to the accumulator row's old value
// (old_i), as sum_o.