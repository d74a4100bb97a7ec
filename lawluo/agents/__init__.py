"""The agents of the firm: receptionist, lawyer, secretary and boss (each small; lawluo/firm orders them)."""
