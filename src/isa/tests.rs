use super::*;

/// xorshift for test values
fn next(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

#[test]
fn fields_are_contiguous_and_fit() {
    for op in Opcode::ALL {
        let f = format(op);
        let mut lsb = 0;
        for fl in &f.fields {
            assert_eq!(fl.lsb, lsb, "{}.{} is not packed", op.mnemonic(), fl.name);
            assert!(fl.width > 0);
            lsb += fl.width;
        }
        assert!(lsb <= INSTR_BITS, "{} is {lsb} bits", op.mnemonic());
        // The common header sits at the same place in every format.
        assert_eq!(f.field("opcode").lsb, 0);
        assert_eq!(f.field("wait").lsb, OPCODE_BITS);
        assert_eq!(f.field("signal").lsb, OPCODE_BITS + NUM_SEMAPHORES);
    }
}

/// Every field of every format at all zeros, all ones and random bit patterns: a word
/// decodes to an instruction that encodes back to the same word.
#[test]
fn decode_encode_round_trips_every_opcode() {
    let mut seed = 0x1234_5678_9abc_def1u64;
    for op in Opcode::ALL {
        let f = format(op);
        for trial in 0..200 {
            let mut word = Word::zero();
            word.set(&f.fields[0], op as u64);
            for fl in &f.fields[1..] {
                let v = match trial {
                    0 => 0,
                    1 => fl.max(),
                    _ => next(&mut seed) & fl.max(),
                };
                word.set(fl, v);
            }
            let instr = Instr::decode(&word).unwrap();
            assert_eq!(instr.opcode(), op);
            assert_eq!(instr.encode().unwrap(), word, "{}", instr.to_asm());
            let hex = word.to_hex();
            assert_eq!(hex.len(), (INSTR_BITS / 4) as usize);
            assert_eq!(Word::from_hex(&hex).unwrap(), word);
        }
    }
}

#[test]
fn hand_encoded_load() {
    // load with wait = bit 7 (vector_to_load), buffer = weight (1), spad_addr = 3,
    // ext_addr = 0x100 (64 hex digits: 256 bits): opcode 1 in bits 3:0, wait in 13:4,
    // buffer in 26:25, spad_addr in 42:27, ext_addr in 74:43.
    let i = Instr {
        wait: 1 << 7,
        ..Instr::new(Op::Load(Transfer {
            buffer: Buffer::Weight,
            spad_addr: 3,
            ext_addr: 0x100,
            ..Transfer::default()
        }))
    };
    let expect: u128 = 1 | (1 << (4 + 7)) | (1 << 25) | (3 << 27) | (0x100u128 << 43);
    assert_eq!(i.encode().unwrap().to_hex(), format!("{expect:064x}"));
    assert_eq!(
        i.to_asm(),
        "load buffer=weight spad_addr=3 ext_addr=0x100 count1=0 wait=vector_to_load"
    );
}

#[test]
fn rejects_values_too_wide_and_bad_opcodes() {
    let m = Instr::new(Op::Matmul(Matmul {
        count0: 4096,
        ..Matmul::default()
    }));
    assert!(matches!(
        m.encode(),
        Err(IsaError::TooWide {
            field: "count0",
            ..
        })
    ));
    // Signed fields hold -2^15 ..= 2^15 - 1 and round-trip negative values.
    let v = Vector {
        zero_point: -32768,
        clamp_max: 32767,
        ..Vector::default()
    };
    let w = Instr::new(Op::Vector(v)).encode().unwrap();
    assert_eq!(Instr::decode(&w).unwrap().op, Op::Vector(v));
    let too_big = Instr::new(Op::Vector(Vector {
        zero_point: 32768,
        ..Vector::default()
    }));
    assert!(too_big.encode().is_err());
    assert!(Instr::decode(&Word::from_hex("f").unwrap()).is_err());
}

#[test]
fn masks_follow_producer_and_consumer() {
    let l2c = 1 << semaphore_index(Queue::Load, Queue::Compute).unwrap();
    let matmul = Instr::new(Op::Matmul(Matmul::default()));
    let ok = Instr {
        wait: l2c,
        ..matmul
    };
    assert!(ok.check_masks().is_ok());
    // The compute queue cannot signal load_to_compute: it does not produce it.
    let bad = Instr {
        signal: l2c,
        ..matmul
    };
    assert!(bad.check_masks().is_err());
    for q in Queue::ALL {
        assert_eq!(consumed_mask(q) & produced_mask(q), 0);
    }
    let all = Queue::ALL.iter().fold(0, |m, q| m | consumed_mask(*q));
    assert_eq!(all, (1 << NUM_SEMAPHORES) - 1);
}

#[test]
fn markdown_lists_every_field() {
    let md = markdown();
    for op in Opcode::ALL {
        for fl in format(op).fields {
            assert!(md.contains(&format!("| {} | {}:{} |", fl.name, fl.msb(), fl.lsb)));
        }
    }
}

/// The widen codes: 0 moves accumulator elements, codes from 1 the ISA's narrow widths
/// (16 and 8 bits, as the field's doc says), and every code fits the field.
#[test]
fn widen_codes_round_trip_and_fit_the_field() {
    assert_eq!(widened_bits(0), None);
    assert_eq!(widened_bits(1), Some(16));
    assert_eq!(widened_bits(2), Some(8));
    assert_eq!(widened_bits(3), None);
    for &bits in &WIDEN_BITS {
        let code = widen_code(bits).expect("a widened width");
        assert_eq!(widened_bits(code), Some(bits));
        assert!(code < 1 << format(Opcode::Load).field("widen").width);
    }
    assert_eq!(widen_code(32), None);
}
