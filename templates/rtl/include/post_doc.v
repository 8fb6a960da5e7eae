// A row post-processor of the vector unit: an accumulator row (acc_row_i) and, for add and
// pool, an operand row (operand_row_i) in, an output row out four cycles later; the
// instruction's controls are held steady while its rows pass.