"""tessel.llm on the trained tiny Llama (llm/testdata:tiny_llama) against PyTorch's references: the
prompt's tokens (exact), its logits (1e-3 absolute, as llm/model's reference test), greedy generation
(PyTorch's continuation, exact) and `tessel generate`'s output for the same settings (exact)."""
import os
import subprocess
import unittest

import numpy as np

import tessel


class LlmTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = os.environ["TESSEL_LLAMA"]
        cls.model = tessel.llm.load(os.path.join(cls.dir, "model-f32.gguf"), kv_f32=True)
        with open(os.path.join(cls.dir, "prompt.txt")) as f:
            cls.prompt = f.read()
        with open(os.path.join(cls.dir, "greedy_text.txt")) as f:
            cls.greedy = f.read()

    def test_tokenize(self):
        tokens = self.model.tokenize(self.prompt)
        self.assertEqual(tokens, np.load(os.path.join(self.dir, "prompt_tokens.npy")).tolist())
        self.assertEqual(self.model.detokenize(tokens), self.prompt)

    def test_logits(self):
        ref = np.load(os.path.join(self.dir, "ref_logits.npy"))
        last = self.model.logits(self.prompt)
        self.assertEqual(last.shape, (self.model.vocab_size,))
        np.testing.assert_allclose(last, ref[-1], rtol=0, atol=1e-3)
        every = self.model.logits(self.prompt, all_positions=True)
        np.testing.assert_allclose(every, ref, rtol=0, atol=1e-3)

    def test_generate_greedy_matches_pytorch(self):
        pieces = list(self.model.generate(self.prompt, max_tokens=64, temperature=0))
        self.assertEqual(len(pieces), 64)
        self.assertEqual("".join(pieces), self.greedy)

    def test_generate_matches_cli(self):
        text = "".join(self.model.generate("ROMEO:", max_tokens=24, temperature=0.8, seed=5))
        cli = subprocess.run([os.environ["TESSEL_CLI"], "generate", "--model", os.path.join(self.dir, "model-f32.gguf"),
                              "--prompt", "ROMEO:", "-n", "24", "--temp", "0.8", "--seed", "5", "--threads", "1",
                              "--kv-type", "f32"], capture_output=True, text=True, check=True).stdout
        self.assertTrue(cli.startswith("ROMEO:" + text), (cli, text))

    def test_sequence_and_errors(self):
        with self.model.sequence() as seq:
            with self.assertRaises(tessel.TesselError) as e:
                seq.decode()
            self.assertEqual(e.exception.status, "TESSEL_FAILED_PRECONDITION")
            seq.prefill(self.model.tokenize("KING"))
            first = [seq.decode(seed=3) for _ in range(8)]
            self.assertEqual(len(seq), len(self.model.tokenize("KING")) + 8)
            with self.assertRaises(tessel.TesselError) as e:
                seq.prefill([self.model.vocab_size])
            self.assertIn("outside the vocabulary", str(e.exception))
        with self.model.sequence() as seq:
            seq.prefill(self.model.tokenize("KING"))
            self.assertEqual([seq.decode(seed=3) for _ in range(8)], first)


if __name__ == "__main__":
    unittest.main()
