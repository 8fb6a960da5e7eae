; conv_relu compiled for design codec_avatar_small (hash dcc5d71ad945d544)

; engine 0: geometry.up[0] (imem0.hex)
    0: load buffer=accumulator spad_addr=126 ext_addr=0x1a8 count0=2 stride0=4 count1=1 signal=load_to_vector
    1: load buffer=input ext_addr=0xfffffff7 count0=10 stride0=1 count1=6 stride1=8 pad_top=1 pad_left=1 pad_right=1
    2: load buffer=weight ext_addr=0x88 count0=72 stride0=1 count1=1 signal=load_to_compute
    3: matmul preload=1 count1=1 wait=load_to_compute
    4: matmul preload=1 swap=1 weight_addr=8 count0=8 stride0=1 count1=4 stride1=10
    5: matmul preload=1 swap=1 accumulate=1 weight_addr=16 input_addr=1 count0=8 stride0=1 count1=4 stride1=10
    6: matmul preload=1 swap=1 accumulate=1 weight_addr=24 input_addr=2 count0=8 stride0=1 count1=4 stride1=10
    7: matmul preload=1 swap=1 accumulate=1 weight_addr=32 input_addr=10 count0=8 stride0=1 count1=4 stride1=10
    8: matmul preload=1 swap=1 accumulate=1 weight_addr=40 input_addr=11 count0=8 stride0=1 count1=4 stride1=10
    9: matmul preload=1 swap=1 accumulate=1 weight_addr=48 input_addr=12 count0=8 stride0=1 count1=4 stride1=10
   10: matmul preload=1 swap=1 accumulate=1 weight_addr=56 input_addr=20 count0=8 stride0=1 count1=4 stride1=10
   11: matmul preload=1 swap=1 accumulate=1 weight_addr=64 input_addr=21 count0=8 stride0=1 count1=4 stride1=10 signal=compute_to_load
   12: load buffer=weight spad_addr=72 ext_addr=0x118 count0=72 stride0=1 count1=1 signal=load_to_compute
   13: matmul preload=1 swap=1 accumulate=1 weight_addr=72 input_addr=22 count0=8 stride0=1 count1=4 stride1=10 wait=load_to_compute
   14: matmul preload=1 swap=1 weight_addr=80 acc_addr=32 count0=8 stride0=1 count1=4 stride1=10
   15: matmul preload=1 swap=1 accumulate=1 weight_addr=88 input_addr=1 acc_addr=32 count0=8 stride0=1 count1=4 stride1=10
   16: matmul preload=1 swap=1 accumulate=1 weight_addr=96 input_addr=2 acc_addr=32 count0=8 stride0=1 count1=4 stride1=10
   17: matmul preload=1 swap=1 accumulate=1 weight_addr=104 input_addr=10 acc_addr=32 count0=8 stride0=1 count1=4 stride1=10
   18: load buffer=input spad_addr=128 ext_addr=0x37 count0=10 stride0=1 count1=6 stride1=8 pad_top=1 pad_left=1 pad_right=1
   19: matmul preload=1 swap=1 accumulate=1 weight_addr=112 input_addr=11 acc_addr=32 count0=8 stride0=1 count1=4 stride1=10
   20: matmul preload=1 swap=1 accumulate=1 weight_addr=120 input_addr=12 acc_addr=32 count0=8 stride0=1 count1=4 stride1=10
   21: matmul preload=1 swap=1 accumulate=1 weight_addr=128 input_addr=20 acc_addr=32 count0=8 stride0=1 count1=4 stride1=10
   22: matmul preload=1 swap=1 accumulate=1 weight_addr=136 input_addr=21 acc_addr=32 count0=8 stride0=1 count1=4 stride1=10
   23: load buffer=weight spad_addr=144 ext_addr=0xd0 count0=72 stride0=1 count1=1 signal=load_to_compute
   24: matmul preload=1 swap=1 accumulate=1 weight_addr=144 input_addr=22 acc_addr=32 count0=8 stride0=1 count1=4 stride1=10 wait=load_to_compute
   25: matmul preload=1 swap=1 accumulate=1 weight_addr=152 input_addr=128 count0=8 stride0=1 count1=4 stride1=10
   26: matmul preload=1 swap=1 accumulate=1 weight_addr=160 input_addr=129 count0=8 stride0=1 count1=4 stride1=10
   27: matmul preload=1 swap=1 accumulate=1 weight_addr=168 input_addr=130 count0=8 stride0=1 count1=4 stride1=10
   28: matmul preload=1 swap=1 accumulate=1 weight_addr=176 input_addr=138 count0=8 stride0=1 count1=4 stride1=10
   29: matmul preload=1 swap=1 accumulate=1 weight_addr=184 input_addr=139 count0=8 stride0=1 count1=4 stride1=10
   30: matmul preload=1 swap=1 accumulate=1 weight_addr=192 input_addr=140 count0=8 stride0=1 count1=4 stride1=10
   31: matmul preload=1 swap=1 accumulate=1 weight_addr=200 input_addr=148 count0=8 stride0=1 count1=4 stride1=10
   32: matmul preload=1 swap=1 accumulate=1 weight_addr=208 input_addr=149 count0=8 stride0=1 count1=4 stride1=10
   33: load buffer=weight ext_addr=0x160 count0=72 stride0=1 count1=1 wait=compute_to_load signal=load_to_compute
   34: matmul preload=1 swap=1 accumulate=1 input_addr=150 count0=8 stride0=1 count1=4 stride1=10 wait=load_to_compute signal=compute_to_vector
   35: matmul preload=1 swap=1 accumulate=1 weight_addr=8 input_addr=128 acc_addr=32 count0=8 stride0=1 count1=4 stride1=10
   36: matmul preload=1 swap=1 accumulate=1 weight_addr=16 input_addr=129 acc_addr=32 count0=8 stride0=1 count1=4 stride1=10
   37: matmul preload=1 swap=1 accumulate=1 weight_addr=24 input_addr=130 acc_addr=32 count0=8 stride0=1 count1=4 stride1=10
   38: matmul preload=1 swap=1 accumulate=1 weight_addr=32 input_addr=138 acc_addr=32 count0=8 stride0=1 count1=4 stride1=10
   39: matmul preload=1 swap=1 accumulate=1 weight_addr=40 input_addr=139 acc_addr=32 count0=8 stride0=1 count1=4 stride1=10
   40: matmul preload=1 swap=1 accumulate=1 weight_addr=48 input_addr=140 acc_addr=32 count0=8 stride0=1 count1=4 stride1=10
   41: matmul preload=1 swap=1 accumulate=1 weight_addr=56 input_addr=148 acc_addr=32 count0=8 stride0=1 count1=4 stride1=10
   42: matmul preload=1 swap=1 accumulate=1 weight_addr=64 input_addr=149 acc_addr=32 count0=8 stride0=1 count1=4 stride1=10
   43: matmul swap=1 accumulate=1 input_addr=150 acc_addr=32 count0=8 stride0=1 count1=4 stride1=10 signal=compute_to_vector
   44: vector relu=1 bias=1 load_bias=1 out_addr=64 bias_addr=126 count=32 multiplier=250 shift=15 zero_point=-10 wait=compute_to_vector|load_to_vector signal=vector_to_store
   45: store buffer=output spad_addr=64 ext_addr=0x1b0 count0=8 stride0=1 count1=4 stride1=8 wait=vector_to_store
   46: vector relu=1 bias=1 load_bias=1 acc_addr=32 bias_addr=127 count=32 multiplier=250 shift=15 zero_point=-10 wait=compute_to_vector signal=vector_to_store
   47: store buffer=output ext_addr=0x1f0 count0=8 stride0=1 count1=4 stride1=8 wait=vector_to_store
   48: end

; engine 1: geometry.up[1] (imem1.hex)
    0: load buffer=accumulator spad_addr=126 ext_addr=0x1a8 count0=2 stride0=4 count1=1 signal=load_to_vector
    1: load buffer=input ext_addr=0x17 count0=10 stride0=1 count1=6 stride1=8 pad_bottom=1 pad_left=1 pad_right=1
    2: load buffer=weight ext_addr=0x88 count0=72 stride0=1 count1=1 signal=load_to_compute
    3: matmul preload=1 count1=1 wait=load_to_compute
    4: matmul preload=1 swap=1 weight_addr=8 count0=8 stride0=1 count1=4 stride1=10
    5: matmul preload=1 swap=1 accumulate=1 weight_addr=16 input_addr=1 count0=8 stride0=1 count1=4 stride1=10
    6: matmul preload=1 swap=1 accumulate=1 weight_addr=24 input_addr=2 count0=8 stride0=1 count1=4 stride1=10
    7: matmul preload=1 swap=1 accumulate=1 weight_addr=32 input_addr=10 count0=8 stride0=1 count1=4 stride1=10
    8: matmul preload=1 swap=1 accumulate=1 weight_addr=40 input_addr=11 count0=8 stride0=1 count1=4 stride1=10
    9: matmul preload=1 swap=1 accumulate=1 weight_addr=48 input_addr=12 count0=8 stride0=1 count1=4 stride1=10
   10: matmul preload=1 swap=1 accumulate=1 weight_addr=56 input_addr=20 count0=8 stride0=1 count1=4 stride1=10
   11: matmul preload=1 swap=1 accumulate=1 weight_addr=64 input_addr=21 count0=8 stride0=1 count1=4 stride1=10 signal=compute_to_load
   12: load buffer=weight spad_addr=72 ext_addr=0x118 count0=72 stride0=1 count1=1 signal=load_to_compute
   13: matmul preload=1 swap=1 accumulate=1 weight_addr=72 input_addr=22 count0=8 stride0=1 count1=4 stride1=10 wait=load_to_compute
   14: matmul preload=1 swap=1 weight_addr=80 acc_addr=32 count0=8 stride0=1 count1=4 stride1=10
   15: matmul preload=1 swap=1 accumulate=1 weight_addr=88 input_addr=1 acc_addr=32 count0=8 stride0=1 count1=4 stride1=10
   16: matmul preload=1 swap=1 accumulate=1 weight_addr=96 input_addr=2 acc_addr=32 count0=8 stride0=1 count1=4 stride1=10
   17: matmul preload=1 swap=1 accumulate=1 weight_addr=104 input_addr=10 acc_addr=32 count0=8 stride0=1 count1=4 stride1=10
   18: load buffer=input spad_addr=128 ext_addr=0x57 count0=10 stride0=1 count1=6 stride1=8 pad_bottom=1 pad_left=1 pad_right=1
   19: matmul preload=1 swap=1 accumulate=1 weight_addr=112 input_addr=11 acc_addr=32 count0=8 stride0=1 count1=4 stride1=10
   20: matmul preload=1 swap=1 accumulate=1 weight_addr=120 input_addr=12 acc_addr=32 count0=8 stride0=1 count1=4 stride1=10
   21: matmul preload=1 swap=1 accumulate=1 weight_addr=128 input_addr=20 acc_addr=32 count0=8 stride0=1 count1=4 stride1=10
   22: matmul preload=1 swap=1 accumulate=1 weight_addr=136 input_addr=21 acc_addr=32 count0=8 stride0=1 count1=4 stride1=10
   23: load buffer=weight spad_addr=144 ext_addr=0xd0 count0=72 stride0=1 count1=1 signal=load_to_compute
   24: matmul preload=1 swap=1 accumulate=1 weight_addr=144 input_addr=22 acc_addr=32 count0=8 stride0=1 count1=4 stride1=10 wait=load_to_compute
   25: matmul preload=1 swap=1 accumulate=1 weight_addr=152 input_addr=128 count0=8 stride0=1 count1=4 stride1=10
   26: matmul preload=1 swap=1 accumulate=1 weight_addr=160 input_addr=129 count0=8 stride0=1 count1=4 stride1=10
   27: matmul preload=1 swap=1 accumulate=1 weight_addr=168 input_addr=130 count0=8 stride0=1 count1=4 stride1=10
   28: matmul preload=1 swap=1 accumulate=1 weight_addr=176 input_addr=138 count0=8 stride0=1 count1=4 stride1=10
   29: matmul preload=1 swap=1 accumulate=1 weight_addr=184 input_addr=139 count0=8 stride0=1 count1=4 stride1=10
   30: matmul preload=1 swap=1 accumulate=1 weight_addr=192 input_addr=140 count0=8 stride0=1 count1=4 stride1=10
   31: matmul preload=1 swap=1 accumulate=1 weight_addr=200 input_addr=148 count0=8 stride0=1 count1=4 stride1=10
   32: matmul preload=1 swap=1 accumulate=1 weight_addr=208 input_addr=149 count0=8 stride0=1 count1=4 stride1=10
   33: load buffer=weight ext_addr=0x160 count0=72 stride0=1 count1=1 wait=compute_to_load signal=load_to_compute
   34: matmul preload=1 swap=1 accumulate=1 input_addr=150 count0=8 stride0=1 count1=4 stride1=10 wait=load_to_compute signal=compute_to_vector
   35: matmul preload=1 swap=1 accumulate=1 weight_addr=8 input_addr=128 acc_addr=32 count0=8 stride0=1 count1=4 stride1=10
   36: matmul preload=1 swap=1 accumulate=1 weight_addr=16 input_addr=129 acc_addr=32 count0=8 stride0=1 count1=4 stride1=10
   37: matmul preload=1 swap=1 accumulate=1 weight_addr=24 input_addr=130 acc_addr=32 count0=8 stride0=1 count1=4 stride1=10
   38: matmul preload=1 swap=1 accumulate=1 weight_addr=32 input_addr=138 acc_addr=32 count0=8 stride0=1 count1=4 stride1=10
   39: matmul preload=1 swap=1 accumulate=1 weight_addr=40 input_addr=139 acc_addr=32 count0=8 stride0=1 count1=4 stride1=10
   40: matmul preload=1 swap=1 accumulate=1 weight_addr=48 input_addr=140 acc_addr=32 count0=8 stride0=1 count1=4 stride1=10
   41: matmul preload=1 swap=1 accumulate=1 weight_addr=56 input_addr=148 acc_addr=32 count0=8 stride0=1 count1=4 stride1=10
   42: matmul preload=1 swap=1 accumulate=1 weight_addr=64 input_addr=149 acc_addr=32 count0=8 stride0=1 count1=4 stride1=10
   43: matmul swap=1 accumulate=1 input_addr=150 acc_addr=32 count0=8 stride0=1 count1=4 stride1=10 signal=compute_to_vector
   44: vector relu=1 bias=1 load_bias=1 out_addr=64 bias_addr=126 count=32 multiplier=250 shift=15 zero_point=-10 wait=compute_to_vector|load_to_vector signal=vector_to_store
   45: store buffer=output spad_addr=64 ext_addr=0x1d0 count0=8 stride0=1 count1=4 stride1=8 wait=vector_to_store
   46: vector relu=1 bias=1 load_bias=1 acc_addr=32 bias_addr=127 count=32 multiplier=250 shift=15 zero_point=-10 wait=compute_to_vector signal=vector_to_store
   47: store buffer=output ext_addr=0x210 count0=8 stride0=1 count1=4 stride1=8 wait=vector_to_store
   48: end

; engine 2: texture.up1[0] (imem2.hex)
    0: end

; engine 3: texture.up1[1] (imem3.hex)
    0: end

; engine 4: texture.up2[0] (imem4.hex)
    0: end

; engine 5: texture.up2[1] (imem5.hex)
    0: end

; engine 6: warp.up[0] (imem6.hex)
    0: end

; engine 7: warp.up[1] (imem7.hex)
    0: end
